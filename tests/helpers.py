"""Assertions for the end-to-end suites."""

from __future__ import annotations

import gzip
import itertools
import json
import math
from collections import Counter
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, Row, SparkSession

__all__ = [
    "FORMAT",
    "assert_same_rows",
    "error_text",
    "jvm",
    "pairwise",
    "plan_nodes",
    "read_table",
    "scan_node",
    "session_builder",
    "split_files",
    "write_table",
]

FORMAT = "indextables"
TEXT = "text"
TYPEMAP = "spark.indextables.indexing.typemap."
MAX_ROWS_PER_SPLIT = "spark.indextables.maxRowsPerSplit"

_MAX_SHOWN = 15


def _freeze(value: Any) -> Any:
    """A hashable, comparable form of a collected value (Rows, lists, dicts, bytes, NaN)."""
    if isinstance(value, Row):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((_freeze(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def assert_same_rows(actual_df: DataFrame, expected_df: DataFrame) -> None:
    """Assert both DataFrames hold the same multiset of rows, whatever their order.

    Columns are matched by name (a source may put partition columns last). On a mismatch the
    message shows the counts and up to 15 missing and unexpected rows.
    """
    assert sorted(actual_df.columns) == sorted(expected_df.columns), (
        f"columns differ: actual {actual_df.columns}, expected {expected_df.columns}"
    )
    columns = expected_df.columns
    actual = Counter(_freeze(r) for r in actual_df.select(*columns).collect())
    expected = Counter(_freeze(r) for r in expected_df.select(*columns).collect())
    if actual == expected:
        return
    missing = expected - actual
    unexpected = actual - expected
    lines = [
        (
            f"rows differ: actual has {sum(actual.values())} rows, "
            f"expected {sum(expected.values())}; {sum(missing.values())} expected rows are "
            f"missing, {sum(unexpected.values())} rows are unexpected"
        ),
        f"columns: {columns}",
    ]
    for title, rows in (("missing", missing), ("unexpected", unexpected)):
        shown = sorted(rows.elements(), key=repr)[:_MAX_SHOWN]
        if shown:
            lines.append(f"{title} (first {len(shown)}):")
            lines.extend(f"  {row!r}" for row in shown)
    raise AssertionError("\n".join(lines))


def pairwise(*dimensions: Sequence[Hashable]) -> list[tuple[Hashable, ...]]:
    """Combinations of the dimensions' values in which every value of each dimension meets every
    value of every other dimension at least once: a pairwise covering array, chosen greedily and
    deterministically from the whole cross product (at each step the first combination that
    covers the most pairs not yet covered). A differential test over three or more dimensions
    runs these instead of the cross product: every two-way interaction, a fraction of the runs."""

    def pairs(combo: tuple[Hashable, ...]) -> set[tuple[int, Hashable, int, Hashable]]:
        return {(i, combo[i], j, combo[j]) for i, j in itertools.combinations(range(len(combo)), 2)}

    candidates = list(itertools.product(*dimensions))
    uncovered = set().union(*(pairs(c) for c in candidates))
    chosen: list[tuple[Hashable, ...]] = []
    while uncovered:
        best = max(candidates, key=lambda c: len(pairs(c) & uncovered))
        chosen.append(best)
        uncovered -= pairs(best)
    return chosen


def plan_nodes(plan: Any) -> list[Any]:
    """Every node of an executed physical plan (a JVM object), through AQE wrappers, query
    stages and the plans of eagerly run commands."""
    out = []
    stack = [plan]
    while stack:
        n = stack.pop()
        name = n.getClass().getSimpleName()
        if name == "AdaptiveSparkPlanExec":
            stack.append(n.executedPlan())
            continue
        if name.endswith("QueryStageExec"):
            stack.append(n.plan())
            continue
        if name == "CommandResultExec":
            stack.append(n.commandPhysicalPlan())
        out.append(n)
        children = n.children()
        for i in range(children.size()):
            stack.append(children.apply(i))
    return out


def jvm(spark: SparkSession) -> Any:
    """The py4j view of the session's JVM, as in `jvm(spark).java.lang.System.gc()`."""
    view = spark.sparkContext._jvm
    if view is None:
        raise AssertionError("the SparkContext is stopped: it has no JVM to call")
    return view


def scan_node(df: DataFrame) -> str:
    """The scan line of df's executed physical plan (what the Scan's description() says): a
    BatchScan, or the IndexTablesLocalScan of a scan the driver answered."""
    plan = str(df._jdf.queryExecution().executedPlan().toString())
    for line in plan.splitlines():
        if "BatchScan" in line or "IndexTablesLocalScan" in line:
            return line.strip().lstrip(":+- ").strip()
    raise AssertionError(f"no BatchScan node in the executed plan:\n{plan}")


def scan_metrics(df: DataFrame) -> dict[str, int]:
    """The raw values of the custom metrics (`metrics/ScanMetrics`, by name) of df's IndexTables
    scan node, after df ran: a BatchScan, or the IndexTablesLocalScan of a scan the driver
    answered (under adaptive execution's query stages too)."""
    pending = [df._jdf.queryExecution().executedPlan()]
    while pending:
        node = pending.pop()
        name = str(node.nodeName())
        if name.startswith(("BatchScan", "IndexTablesLocalScan")):
            metrics = node.metrics()
            names = metrics.keys().toSeq()
            return {
                str(names.apply(k)): int(metrics.apply(names.apply(k)).value())
                for k in range(names.size())
            }
        if name == "AdaptiveSparkPlan":
            pending.append(node.executedPlan())
        elif name.endswith("QueryStage"):
            pending.append(node.plan())
        else:
            children = node.children()
            pending.extend(children.apply(i) for i in range(children.size()))
    raise AssertionError(
        "no IndexTables scan node in the executed plan:\n"
        + str(df._jdf.queryExecution().executedPlan().toString())
    )


def error_text(error: BaseException) -> str:
    """Everything an error says: its message plus the messages of its JVM cause chain."""
    parts = [str(error)]
    throwable = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    depth = 0
    while throwable is not None and depth < 20:
        try:
            parts.append(f"{throwable.getClass().getName()}: {throwable.getMessage()}")
            throwable = throwable.getCause()
        except Exception:  # noqa: BLE001 (a py4j handle that no longer answers: keep what we have)
            break
        depth += 1
    stack = getattr(error, "_stackTrace", None)
    if stack:
        parts.append(str(stack))
    return "\n".join(parts)


def session_builder(app_name: str, conf: dict[str, str] | None = None) -> SparkSession.Builder:
    """The local Spark session every suite (and every writer process a test starts) runs in,
    before configure_spark: two cores, no UI, UTC, small shuffles.

    Its JVM compiles with C1 only: the suites run thousands of short queries, not one long job,
    and on a two-core machine C2's compiler threads took CPU the tests needed (the filters'
    differential suite ran 8% faster without them). Tests that set
    spark.driver.extraJavaOptions keep it: Spark puts these options before theirs."""
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.defaultJavaOptions", "-XX:TieredStopAtLevel=1")
        .config("spark.sql.session.timeZone", "UTC")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    return builder


def write_table(
    df: DataFrame,
    path: str,
    mode: str = "errorifexists",
    partition_by: tuple[str, ...] = (),
    options: dict[str, str] | None = None,
) -> None:
    """Write df as an IndexTables table the way a user does."""
    writer = df.write.format(FORMAT).mode(mode).options(**(options or {}))
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(path)


def read_table(spark: SparkSession, path: str) -> DataFrame:
    return spark.read.format(FORMAT).load(path)


def split_files(table_path: str) -> list[Path]:
    """Every split file under a table path, partition directories included."""
    return sorted(Path(table_path).rglob("*.split"))


def version_actions(table_path: str, version: int) -> list[dict[str, Any]]:
    """The actions of one version file of a local table, as JSON objects: plain JSON lines, or
    gzip (after the header 01 01, or bare)."""
    raw = (Path(table_path) / "_transaction_log" / f"{version:020d}.json").read_bytes()
    if raw[:2] == b"\x01\x01":
        raw = gzip.decompress(raw[2:])
    elif raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
