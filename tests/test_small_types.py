"""`tinyint` and `smallint` columns, stored as integers and read back as their own types (issue 30
item 7), on both layouts.

Every answer is checked against the same query on Parquet written by Spark from the same rows:
each type's smallest and largest values, negatives and NULLs, in three appends (three splits whose
min/max statistics do not overlap, so that the log's statistics skip splits). Pushdown is read
from the executed plan: no Filter node above the scan, the scan's PushedAggregation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ByteType,
    DataType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
)

from helpers import TYPEMAP, assert_same_rows, read_table, scan_node, version_actions, write_table

pytestmark = pytest.mark.usefixtures("layout")

SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("t", ByteType()),
        StructField("s", ShortType()),
        StructField("k", StringType()),
    ]
)
# One list per append, each its own split: negatives, small non-negatives, large values.
PARTS: list[list[tuple[int, int | None, int | None, str]]] = [
    [(0, -128, -32768, "a"), (1, -1, -1, "b"), (2, None, -300, "a"), (3, -100, None, "c")],
    [(10, 0, 0, "a"), (11, 1, 5, "b"), (12, 50, 1000, "b"), (13, None, None, "c"), (14, 1, 5, "a")],
    [(20, 127, 32767, "c"), (21, 100, 30000, "a"), (22, 126, None, "b"), (23, 127, 31000, "a")],
]
# Filters the splits answer exactly: Spark keeps no Filter node over the scan.
PUSHED = [
    "t = -128",
    "t = 127",
    "t = 0",
    "t < 0",
    "t <= -1",
    "t > 100",
    "t >= 126",
    "t >= -1 AND t <= 1",
    "t BETWEEN -128 AND -100",
    "t IN (1, -128, 127)",
    "t IS NULL",
    "t IS NOT NULL",
    "NOT (t = 1)",
    "s = -32768",
    "s = 32767",
    "s < -1",
    "s > 1000",
    "s BETWEEN -32768 AND 5",
    "s IN (-32768, 5, 32767)",
    "s IS NULL",
    "t = 1 OR s = 32767",
    "t = 1 AND id > 11",
]
# Literals outside the column's type: Spark compares them through its own casts (or folds the
# comparison away); whatever it pushes, the answer must be Parquet's.
OUT_OF_RANGE = [
    "t = 300",
    "t < 300",
    "t > -129",
    "t >= 128",
    "t IN (128, -129, 1)",
    "s = 40000",
    "s > -40000",
    "s < 32768",
    "t = 1.5",
    "t < 1.5",
    "s >= 4.5e4",
]

Tables = dict[str, tuple[str, DataFrame]]


def _frame(spark: SparkSession, rows: list[tuple[int, int | None, int | None, str]]) -> DataFrame:
    return spark.createDataFrame(rows, SCHEMA).coalesce(1)


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, layout: str) -> Tables:
    """The rows in three appends, unpartitioned ("plain"), unpartitioned with `k` as tokenized text
    ("documents": the splits layout then writes through the batch-document path, not the Arrow
    FFI one), and partitioned by a tinyint and a smallint column ("partitioned"), each with its
    Parquet oracle."""
    root = tmp_path_factory.mktemp(f"small-{layout}")
    parts = [_frame(spark, rows) for rows in PARTS]
    everything = parts[0].unionByName(parts[1]).unionByName(parts[2])
    out: Tables = {}
    layouts: dict[str, tuple[str, ...]] = {
        "plain": (),
        "documents": (),
        "partitioned": ("pt", "ps"),
    }
    for name, partition_by in layouts.items():
        options = {TYPEMAP + "k": "text"} if name == "documents" else {}
        path = str(root / name)
        frames = parts
        if partition_by:
            frames = [
                p.withColumn("pt", F.col("t")).withColumn("ps", F.col("s")).drop("t", "s")
                for p in parts
            ]
        for i, df in enumerate(frames):
            write_table(
                df,
                path,
                mode="append" if i else "errorifexists",
                partition_by=partition_by,
                options=options,
            )
        parquet = str(root / f"{name}.parquet")
        frames[0].unionByName(frames[1]).unionByName(frames[2]).write.parquet(parquet)
        out[name] = (path, spark.read.parquet(parquet))
    assert everything.count() == sum(len(p) for p in PARTS)
    return out


def _filter_nodes(df: DataFrame) -> list[str]:
    """The Filter nodes of df's executed plan: what Spark still checks over the scan."""
    plan = str(df._jdf.queryExecution().executedPlan().toString())
    return [line for line in plan.splitlines() if "Filter " in line and "Scan" not in line]


def _types(df: DataFrame) -> dict[str, DataType]:
    return {f.name: f.dataType for f in df.schema.fields}


def test_the_columns_read_back_as_their_own_types(spark: SparkSession, tables: Tables) -> None:
    for name in ("plain", "documents", "partitioned"):
        path, oracle = tables[name]
        table = read_table(spark, path)
        assert _types(table) == _types(oracle), name
        assert_same_rows(table, oracle)


@pytest.mark.parametrize("name", ["plain", "documents"])
def test_each_split_records_min_and_max_as_decimal_numbers(tables: Tables, name: str) -> None:
    path, _ = tables[name]
    adds = [a["add"] for v in range(3) for a in version_actions(path, v) if "add" in a]
    bounds = [
        ({c: a["minValues"][c] for c in "ts"}, {c: a["maxValues"][c] for c in "ts"}) for a in adds
    ]
    assert bounds == [
        ({"t": "-128", "s": "-32768"}, {"t": "-1", "s": "-1"}),
        ({"t": "0", "s": "0"}, {"t": "50", "s": "1000"}),
        ({"t": "100", "s": "30000"}, {"t": "127", "s": "32767"}),
    ]


@pytest.mark.parametrize("condition", PUSHED)
@pytest.mark.parametrize("name", ["plain", "documents"])
def test_a_filter_is_pushed_and_answers_as_parquet(
    spark: SparkSession, tables: Tables, name: str, condition: str
) -> None:
    path, oracle = tables[name]
    df = read_table(spark, path).filter(condition)
    assert_same_rows(df, oracle.filter(condition))
    assert _filter_nodes(df) == [], scan_node(df)
    assert "PushedFilters: [" in scan_node(df)


@pytest.mark.parametrize("condition", ["t = 127", "t < -1", "s > 20000", "s = -32768"])
def test_the_statistics_skip_splits(spark: SparkSession, tables: Tables, condition: str) -> None:
    path, oracle = tables["plain"]
    df = read_table(spark, path).filter(condition)
    assert_same_rows(df, oracle.filter(condition))
    assert "Splits: 1/3" in scan_node(df), scan_node(df)


@pytest.mark.parametrize("condition", OUT_OF_RANGE)
def test_a_literal_outside_the_type_never_changes_an_answer(
    spark: SparkSession, tables: Tables, condition: str
) -> None:
    path, oracle = tables["plain"]
    assert_same_rows(read_table(spark, path).filter(condition), oracle.filter(condition))


@pytest.mark.parametrize(
    "condition",
    ["pt = -128", "pt = 127", "pt > 0", "pt IS NULL", "ps = 32767", "ps < 0", "ps IN (5, -1)"],
)
def test_partition_columns_of_the_small_types_prune_and_answer(
    spark: SparkSession, tables: Tables, condition: str
) -> None:
    path, oracle = tables["partitioned"]
    df = read_table(spark, path).filter(condition)
    assert_same_rows(df, oracle.filter(condition))
    assert _filter_nodes(df) == [], scan_node(df)


# Each aggregation by name, as the functions of the columns it applies to both columns.
AGGREGATES: dict[str, list[Callable[[str], Column]]] = {
    "count": [F.count],
    "sum": [F.sum],
    "min_max": [F.min, F.max],
    "avg": [F.avg],
}


def _aggs(name: str) -> list[Column]:
    return [fn(c) for fn in AGGREGATES[name] for c in ("t", "s")]


@pytest.mark.parametrize("name", sorted(AGGREGATES))
@pytest.mark.parametrize("condition", [None, "t >= 0", "s < 0"])
def test_aggregates_are_pushed_with_spark_result_types(
    spark: SparkSession, tables: Tables, name: str, condition: str | None
) -> None:
    path, oracle = tables["plain"]
    table = read_table(spark, path)
    if condition:
        table, oracle = table.filter(condition), oracle.filter(condition)
    df = table.agg(*_aggs(name))
    expected = oracle.agg(*_aggs(name))
    assert _types(df) == _types(expected)
    assert_same_rows(df, expected)
    assert "PushedAggregation: [" in scan_node(df), scan_node(df)


@pytest.mark.parametrize("column", ["t", "s"])
def test_group_by_a_small_integer_column_is_pushed(
    spark: SparkSession, tables: Tables, column: str
) -> None:
    path, oracle = tables["plain"]

    def q(df: DataFrame) -> DataFrame:
        return df.groupBy(column).agg(
            F.count("*").alias("n"), F.min("s").alias("lo"), F.max("t").alias("hi")
        )

    df = q(read_table(spark, path))
    assert _types(df) == _types(q(oracle))
    assert_same_rows(df, q(oracle))
    assert f"PushedGroupBy: [{column}]" in scan_node(df), scan_node(df)


def test_group_by_a_small_integer_partition_column(spark: SparkSession, tables: Tables) -> None:
    path, oracle = tables["partitioned"]

    def q(df: DataFrame) -> DataFrame:
        return df.groupBy("pt").agg(F.count("*").alias("n"), F.sum("ps").alias("total"))

    df = q(read_table(spark, path))
    assert _types(df) == _types(q(oracle))
    assert_same_rows(df, q(oracle))


def test_min_and_max_answered_from_the_log_keep_the_type(
    spark: SparkSession, tables: Tables
) -> None:
    path, oracle = tables["plain"]
    cols = [F.min("t"), F.max("t"), F.min("s"), F.max("s"), F.count("*")]
    df = read_table(spark, path).agg(*cols)
    assert _types(df) == _types(oracle.agg(*cols))
    assert_same_rows(df, oracle.agg(*cols))
    assert "AnsweredFromLog: true" in scan_node(df), scan_node(df)


def test_sql_create_insert_and_read_back(spark: SparkSession, tmp_path: Path) -> None:
    name = "small_types_sql"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, t TINYINT, s SMALLINT) USING indextables "
        f"LOCATION '{tmp_path / 'sql'}'"
    )
    try:
        spark.sql(f"INSERT INTO {name} VALUES (1, -128, 32767), (2, 127, -32768), (3, NULL, NULL)")
        rows = spark.sql(f"SELECT id, t, s FROM {name} WHERE t < 0 OR s IS NULL ORDER BY id")
        assert [tuple(r) for r in rows.collect()] == [(1, -128, 32767), (3, None, None)]
        assert _types(spark.table(name))["t"] == ByteType()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_a_companion_index_built_over_parquet_holds_the_small_types(
    spark: SparkSession, tables: Tables, tmp_path: Path
) -> None:
    """BUILD INDEXTABLES COMPANION over Parquet files whose columns are INT32 annotated as 8- and
    16-bit integers: the index reads them back as tinyint and smallint, records their min/max
    and answers filters and aggregates as the Parquet files do."""
    _, oracle = tables["plain"]
    source, index = tmp_path / "source", tmp_path / "index"
    oracle.coalesce(1).write.parquet(str(source))
    spark.sql(f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}'").collect()
    table = read_table(spark, str(index))
    assert _types(table) == _types(oracle)
    assert_same_rows(table, oracle)
    adds = [a["add"] for a in version_actions(str(index), 0) if "add" in a]
    assert [(a["minValues"]["t"], a["maxValues"]["s"]) for a in adds] == [("-128", "32767")]
    for condition in ("t = -128", "t > 100", "s IN (-32768, 5)", "t IS NULL"):
        df = table.filter(condition)
        assert_same_rows(df, oracle.filter(condition))
        assert _filter_nodes(df) == [], scan_node(df)
    aggs = [F.min("t"), F.max("s"), F.sum("s"), F.count("t")]
    df = table.filter("t >= 0").agg(*aggs)
    assert_same_rows(df, oracle.filter("t >= 0").agg(*aggs))
    assert "PushedAggregation: [" in scan_node(df), scan_node(df)


def test_merge_splits_keeps_the_values_and_the_numeric_min_and_max(
    spark: SparkSession, tmp_path: Path
) -> None:
    """MERGE SPLITS of the three splits: one split holding every row, its statistics the numeric
    min and max of all three (as text, "-1" sorts below "-128")."""
    path = str(tmp_path / "merged")
    frames = [_frame(spark, rows) for rows in PARTS]
    for i, df in enumerate(frames):
        write_table(df, path, mode="append" if i else "errorifexists")
    spark.sql(f"MERGE SPLITS '{path}'").collect()
    everything = frames[0].unionByName(frames[1]).unionByName(frames[2])
    table = read_table(spark, path)
    assert_same_rows(table, everything)
    adds = [a["add"] for a in version_actions(path, 3) if "add" in a]
    assert [(a["minValues"]["t"], a["maxValues"]["t"], a["minValues"]["s"]) for a in adds] == [
        ("-128", "127", "-32768")
    ]
    df = table.filter("t < -1")
    assert_same_rows(df, everything.filter("t < -1"))
    assert _filter_nodes(df) == [], scan_node(df)
