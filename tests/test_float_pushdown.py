"""Ranges on floating columns are pushed exactly where the splits allow it (issue 28 item 2).

Spark orders every NaN above every number, so `x > 10` is TRUE for NaN. The index orders a NaN
by its bits: a plain NaN above +Infinity, as Spark does, but one with the sign bit set (what
`sqrt(-1.0)` makes on x86) below -Infinity. Each split records, per floating column, how many
NaN values it holds and how many of them have the sign bit (the add action's `stats`,
`{"nanCount": {...}, "signedNanCount": {...}}`); a range is pushed exactly when every split the
scan reads holds no NaN with the sign bit in the column, and otherwise searched as a superset
that Spark checks again. Answers are checked against Parquet, with NaN of both signs,
+/-Infinity, -0.0 and NULLs in the data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DoubleType, FloatType, LongType, StructField, StructType

from helpers import assert_same_rows, read_table, scan_node, version_actions, write_table

pytestmark = pytest.mark.usefixtures("layout", "searches_by_tasks")

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
    "x < 5",
    "x <= 10.5 AND id >= 100",
    "x < double('Infinity')",
    "x > double('-Infinity')",
]
# Each table by name: its path and its Parquet oracle.
Tables = dict[str, tuple[str, DataFrame]]
# An infinite bound cannot be named in a query: Spark checks those filters.
INFINITE = {"x < double('Infinity')", "x > double('-Infinity')"}
# On the signed table, `id < 30` (or `id >= 105`) prunes the split holding a NaN with the sign
# bit (min/max statistics): the splits read order NaN as Spark does, so the range is exact.
PRUNED_TO_ORDERED = {"x > 10 AND id < 30"}


def _frame(spark: SparkSession, values: list[float | None], first: int) -> DataFrame:
    """One split's rows: `x` holds `values`, `f` the same as floats (1e300 becomes Infinity)."""
    rows = [(first + i, v, v) for i, v in enumerate(values)]
    return spark.createDataFrame(rows, SCHEMA).coalesce(1)


def _filter_nodes(df: DataFrame) -> list[str]:
    """The Filter nodes of df's executed plan: what Spark still checks over the scan."""
    plan = str(df._jdf.queryExecution().executedPlan().toString())
    return [line for line in plan.splitlines() if "Filter " in line and "Scan" not in line]


def _counts(path: str, kind: str) -> list[dict[str, int]]:
    adds = [a["add"] for v in range(2) for a in version_actions(path, v) if "add" in a]
    return [json.loads(a["stats"])[kind] for a in adds]


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, layout: str) -> Tables:
    root = tmp_path_factory.mktemp(f"float-{layout}")
    clean_a, clean_b = _frame(spark, CLEAN, 0), _frame(spark, CLEAN[::-1], 100)
    with_nan = _frame(spark, [NAN, 12.0, None, -0.0, INF, NAN], 200)
    # -NAN has the sign bit set; `sqrt(-1.0)` in Spark gives the same on x86.
    signed = _frame(spark, [-NAN, 12.0, None, -0.0, INF, NAN, 4.0], 300)
    out: Tables = {}
    for name, parts in (
        ("clean", [clean_a, clean_b]),
        ("mixed", [clean_a, with_nan]),
        ("signed", [clean_a, signed]),
    ):
        path = str(root / name)
        for i, df in enumerate(parts):
            write_table(df, path, mode="append" if i else "errorifexists")
        everything = parts[0].unionByName(parts[1])
        parquet = str(root / f"{name}.parquet")
        everything.write.parquet(parquet)
        out[name] = (path, spark.read.parquet(parquet))
    return out


def test_each_split_records_its_nan_counts(tables: Tables) -> None:
    none = {"f": 0, "x": 0}
    assert _counts(tables["clean"][0], "nanCount") == [none, none]
    assert _counts(tables["mixed"][0], "nanCount") == [none, {"f": 2, "x": 2}]
    assert _counts(tables["mixed"][0], "signedNanCount") == [none, none]
    assert _counts(tables["signed"][0], "nanCount") == [none, {"f": 2, "x": 2}]
    assert _counts(tables["signed"][0], "signedNanCount") == [none, {"f": 1, "x": 1}]


def _checked(spark: SparkSession, table: tuple[str, DataFrame], condition: str) -> DataFrame:
    """The table filtered by `condition`, its rows checked against Parquet's."""
    path, oracle = table
    df = read_table(spark, path).filter(condition)
    assert_same_rows(df, oracle.filter(condition))
    return df


@pytest.mark.parametrize("table", ["clean", "mixed"])
@pytest.mark.parametrize("condition", FILTERS)
def test_a_range_is_pushed_exactly_where_nan_is_ordered_as_spark_orders_it(
    spark: SparkSession, tables: Tables, table: str, condition: str
) -> None:
    """Without NaN, or with plain NaN only (which sorts above every number in both)."""
    df = _checked(spark, tables[table], condition)
    if condition in INFINITE:
        assert _filter_nodes(df), scan_node(df)
        return
    line = scan_node(df)
    assert "PushedFilters: [" in line and "PushedQuery: match_all" not in line, line
    assert _filter_nodes(df) == [], _filter_nodes(df)


@pytest.mark.parametrize("condition", FILTERS)
def test_a_range_where_a_split_holds_a_signed_nan_is_searched_wider_and_right(
    spark: SparkSession, tables: Tables, condition: str
) -> None:
    """A NaN with the sign bit sorts below every number in the index: the range is searched as
    a superset (with the values below every number when it has no upper bound) and Spark
    checks it. Before the split recorded such NaN, `x < 5` returned that NaN row."""
    df = _checked(spark, tables["signed"], condition)
    line = scan_node(df)
    if condition in PRUNED_TO_ORDERED:
        assert _filter_nodes(df) == [], _filter_nodes(df)
    else:
        assert _filter_nodes(df), line
    if condition not in INFINITE:
        assert "PushedQuery: match_all" not in line, line


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
