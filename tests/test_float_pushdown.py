"""Ranges on floating columns are pushed exactly where the splits allow it (issue 28 item 2).

Spark orders NaN above every number, so `x > 10` is TRUE for NaN; the index's range query does
not match NaN. Each split records how many NaN values each floating column holds (the add
action's `stats`, `{"nanCount": {...}}`); a range without an upper bound is pushed exactly when
every split the scan reads holds no NaN in the column, and handed back to Spark otherwise.
Answers are checked against Parquet, with NaN, +/-Infinity, -0.0 and NULLs in the data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DoubleType, FloatType, LongType, StructField, StructType

from helpers import assert_same_rows, read_table, scan_node, version_actions, write_table

pytestmark = pytest.mark.usefixtures("layout")

INF = float("inf")
NAN = float("nan")
SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("x", DoubleType()),
        StructField("f", FloatType()),
    ]
)
# Every special value but NaN, and ordinary ones on both sides of the bounds the tests use.
CLEAN = [INF, -INF, -0.0, 0.0, None, 10.0, 10.5, 11.0, -5.0, 3.25, 1e300, -1e-300, 9.999, 42.0]
FILTERS = [
    "x > 10",
    "x >= 10",
    "x > -5",
    "x >= -1e-300",
    "f > 1.5",
    "x > 10 AND id < 30",
    "x > 10 AND id >= 105",
    "x > 10 OR id < 3",
    "NOT (x > 10)",
    "x > 10 AND x < 1e301",
]
# Each table by name: its path and its Parquet oracle.
Tables = dict[str, tuple[str, DataFrame]]
# The filters with a range without an upper bound: Spark must check them where NaN may be
# (Spark itself turns NOT (x > 10) into x <= 10, which has one). On the mixed table, `id < 30`
# prunes the split holding NaN (min/max statistics): the splits read hold none, so it is pushed.
UNBOUNDED = set(FILTERS) - {"x > 10 AND x < 1e301", "NOT (x > 10)", "x > 10 AND id < 30"}


def _frame(spark: SparkSession, values: list[float | None], first: int) -> DataFrame:
    """One split's rows: `x` holds `values`, `f` the same as floats (1e300 becomes Infinity)."""
    rows = [(first + i, v, v) for i, v in enumerate(values)]
    return spark.createDataFrame(rows, SCHEMA).coalesce(1)


def _filter_nodes(df: DataFrame) -> list[str]:
    """The Filter nodes of df's executed plan: what Spark still checks over the scan."""
    plan = str(df._jdf.queryExecution().executedPlan().toString())
    return [line for line in plan.splitlines() if "Filter " in line and "Scan" not in line]


def _nan_counts(path: str) -> list[dict[str, int]]:
    adds = [a["add"] for v in range(2) for a in version_actions(path, v) if "add" in a]
    return [json.loads(a["stats"])["nanCount"] for a in adds]


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, layout: str) -> Tables:
    root = tmp_path_factory.mktemp(f"float-{layout}")
    clean_a, clean_b = _frame(spark, CLEAN, 0), _frame(spark, CLEAN[::-1], 100)
    with_nan = _frame(spark, [NAN, 12.0, None, -0.0, INF, NAN], 200)
    out: Tables = {}
    for name, parts in (("clean", [clean_a, clean_b]), ("mixed", [clean_a, with_nan])):
        path = str(root / name)
        for i, df in enumerate(parts):
            write_table(df, path, mode="append" if i else "errorifexists")
        everything = parts[0].unionByName(parts[1])
        parquet = str(root / f"{name}.parquet")
        everything.write.parquet(parquet)
        out[name] = (path, spark.read.parquet(parquet))
    return out


def test_each_split_records_its_nan_counts(tables: Tables) -> None:
    clean, _ = tables["clean"]
    mixed, _ = tables["mixed"]
    assert _nan_counts(clean) == [{"f": 0, "x": 0}, {"f": 0, "x": 0}]
    assert _nan_counts(mixed) == [{"f": 0, "x": 0}, {"f": 2, "x": 2}]


def _checked(spark: SparkSession, table: tuple[str, DataFrame], condition: str) -> DataFrame:
    """The table filtered by `condition`, its rows checked against Parquet's."""
    path, oracle = table
    df = read_table(spark, path).filter(condition)
    assert_same_rows(df, oracle.filter(condition))
    return df


@pytest.mark.parametrize("condition", FILTERS)
def test_a_range_on_a_nan_free_floating_column_is_pushed_exactly(
    spark: SparkSession, tables: Tables, condition: str
) -> None:
    df = _checked(spark, tables["clean"], condition)
    line = scan_node(df)
    assert "PushedFilters: [" in line and "PushedQuery: match_all" not in line, line
    assert _filter_nodes(df) == [], _filter_nodes(df)


@pytest.mark.parametrize("condition", FILTERS)
def test_a_range_where_a_split_holds_nan_is_handed_back_and_right(
    spark: SparkSession, tables: Tables, condition: str
) -> None:
    df = _checked(spark, tables["mixed"], condition)
    if condition in UNBOUNDED:
        assert _filter_nodes(df), scan_node(df)
    else:
        assert _filter_nodes(df) == [], _filter_nodes(df)


def test_a_table_without_nan_records_hands_the_range_back(
    spark: SparkSession, tables: Tables, tmp_path: Path
) -> None:
    """A split written before the record existed (its add has no `stats`) may hold NaN."""
    path, oracle = tables["clean"]
    copy = tmp_path / "old"
    shutil.copytree(path, copy)
    for version in range(2):
        file = copy / "_transaction_log" / f"{version:020d}.json"
        actions = version_actions(str(copy), version)
        for a in actions:
            if "add" in a:
                a["add"].pop("stats", None)
        file.write_text("".join(json.dumps(a) + "\n" for a in actions))
    df = read_table(spark, str(copy)).filter("x > 10")
    assert_same_rows(df, oracle.filter("x > 10"))
    assert _filter_nodes(df), scan_node(df)
