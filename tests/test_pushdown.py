"""Filters, limits and partition predicates reach the scan (visible in its plan line).

The scan's description() must list pushed filters as `PushedFilters: [...]` using Spark's V1
filter strings (as Parquet does, e.g. `EqualTo(level,ERROR)`); the V2 predicate strings
(`level = 'ERROR'`) are accepted too.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Callable

import pytest
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import assert_same_rows, plan_nodes, read_table, scan_node, write_table

pytestmark = pytest.mark.usefixtures("layout")


def _c(name: str) -> Callable[[], Column]:
    return lambda: F.col(name)


# Columns need a running session, so filters are built inside the tests from these makers.
level, host, status = _c("level"), _c("host"), _c("status")
latency, message, ident = _c("latency_ms"), _c("message"), _c("id")

# name -> (filter maker, [(V1 string, V2 string), ...] that must all appear among the pushed
# filters)
PUSHED: dict[str, tuple[Callable[[], Column], list[tuple[str, str]]]] = {
    "equal_to": (lambda: level() == "ERROR", [("EqualTo(level,ERROR)", "level = 'ERROR'")]),
    "in": (
        lambda: level().isin("ERROR", "WARN"),
        [("In(level, [ERROR,WARN])", "level IN ('ERROR', 'WARN')")],
    ),
    "double_range": (
        lambda: (latency() >= 10) & (latency() < 50),
        [
            ("GreaterThanOrEqual(latency_ms,10.0)", "latency_ms >= 10.0"),
            ("LessThan(latency_ms,50.0)", "latency_ms < 50.0"),
        ],
    ),
    "long_range": (
        lambda: (ident() > 100) & (ident() <= 2000),
        [("GreaterThan(id,100)", "id > 100"), ("LessThanOrEqual(id,2000)", "id <= 2000")],
    ),
    "starts_with": (
        lambda: host().startswith("node-0"),
        [("StringStartsWith(host,node-0)", "host LIKE 'node-0%'")],
    ),
    "contains": (
        lambda: message().contains("failed"),
        [("StringContains(message,failed)", "message LIKE '%failed%'")],
    ),
    "is_null": (lambda: host().isNull(), [("IsNull(host)", "host IS NULL")]),
    "is_not_null": (lambda: host().isNotNull(), [("IsNotNull(host)", "host IS NOT NULL")]),
    "or": (
        lambda: (level() == "ERROR") | (status() == 500),
        [("Or(EqualTo(level,ERROR),EqualTo(status,500))", "(level = 'ERROR') OR (status = 500)")],
    ),
    "and_inside_or": (
        lambda: ((level() == "ERROR") & (status() == 500)) | host().isNull(),
        [
            (
                "Or(And(EqualTo(level,ERROR),EqualTo(status,500)),IsNull(host))",
                "((level = 'ERROR') AND (status = 500)) OR (host IS NULL)",
            )
        ],
    ),
    "not": (
        lambda: ~(level() == "DEBUG"),
        [("Not(EqualTo(level,DEBUG))", "NOT (level = 'DEBUG')")],
    ),
}


@pytest.fixture(scope="module")
def table(spark: SparkSession, logs_table: str) -> DataFrame:
    return read_table(spark, logs_table)


def _pushed_part(line: str) -> str:
    assert "PushedFilters: [" in line, f"the scan reports no PushedFilters: {line}"
    return line[line.index("PushedFilters: [") :]


@pytest.mark.parametrize("name", sorted(PUSHED))
def test_filter_is_pushed_to_the_scan(table: DataFrame, logs_df: DataFrame, name: str) -> None:
    make_cond, expected = PUSHED[name]
    cond = make_cond()
    filtered = table.filter(cond)
    pushed = _pushed_part(scan_node(filtered))
    for v1, v2 in expected:
        assert v1 in pushed or v2 in pushed, f"{v1!r} (or {v2!r}) not pushed: {pushed}"
    assert_same_rows(filtered, logs_df.filter(cond))


def test_limit_on_a_filtered_query_is_pushed(table: DataFrame) -> None:
    limited = table.filter(level() == "ERROR").limit(100)
    line = scan_node(limited)
    assert "PushedLimit: 100" in line, line
    rows = limited.collect()
    assert len(rows) == 100
    assert {r.level for r in rows} == {"ERROR"}


@pytest.fixture(scope="module")
def partitioned(
    spark: SparkSession, logs_df: DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> tuple[DataFrame, DataFrame]:
    source = logs_df.filter(F.col("ts").isNotNull()).select("id", "day", "level", "message")
    path = str(tmp_path_factory.mktemp("partitioned") / "table")
    write_table(source, path, partition_by=("day",))
    return read_table(spark, path), source


def _pruned(line: str, column: str) -> bool:
    splits = re.search(r"Splits: (\d+)/(\d+)", line)
    if splits and int(splits.group(1)) < int(splits.group(2)):
        return True
    filters = re.search(r"PartitionFilters: \[([^\]]*)\]", line)
    return bool(filters and column in filters.group(1))


@pytest.mark.parametrize(
    "make_cond",
    [
        lambda: F.col("day") == F.lit(dt.date(2024, 3, 2)),
        lambda: F.col("day").isin(dt.date(2024, 3, 1), dt.date(2024, 3, 4)),
        lambda: F.col("day") > F.lit(dt.date(2024, 3, 5)),
    ],
    ids=["equal", "in", "greater"],
)
def test_partition_filters_prune_directories(
    partitioned: tuple[DataFrame, DataFrame], make_cond: Callable[[], Column]
) -> None:
    table, source = partitioned
    cond = make_cond()
    filtered = table.filter(cond)
    line = scan_node(filtered)
    assert _pruned(line, "day"), f"no PartitionFilters on day and no pruned Splits k/n: {line}"
    assert_same_rows(filtered, source.filter(cond))


def test_a_broadcast_join_narrows_the_search_to_the_keys_it_keeps(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Spark's dynamic pruning hands the keys a selective broadcast side keeps to the scan when
    its job starts; a search then reads only the rows with those keys. (A companion scan with
    nothing for the index to do reads Parquet instead, which takes no runtime filter.)"""
    path = str(tmp_path / "facts")
    facts = spark.range(0, 9000).select(
        "id", F.concat(F.lit("u"), (F.col("id") % 50).cast("string")).alias("user")
    )
    for k in range(3):
        write_table(facts.where(F.col("id") % 3 == k), path, mode="append")
    users = spark.createDataFrame(
        [(f"u{i}", "eu" if i < 5 else "us") for i in range(50)], "user string, region string"
    )
    joined = (
        read_table(spark, path)
        .where("id >= 0")
        .join(F.broadcast(users.where("region = 'eu'")), "user")
    )
    assert_same_rows(joined, facts.join(users.where("region = 'eu'"), "user"))
    scan = scan_node(joined)
    assert "RuntimeFilters: [dynamicpruningexpression(user#" in scan, scan
    joined.collect()
    scans = [
        n
        for n in plan_nodes(joined._jdf.queryExecution().executedPlan())
        if n.getClass().getSimpleName() == "BatchScanExec"
    ]
    # 5 of the 50 users: 900 of the 9000 rows.
    assert sum(int(n.metrics().get("numOutputRows").get().value()) for n in scans) == 900
