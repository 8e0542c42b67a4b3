"""The Structured Streaming source (issue 32): `readStream.format("indextables")`.

Every stream runs as users run one, against the built JAR, into a Parquet file sink (itself
exactly once), and the same steps on a Delta table read by Delta's streaming source are the
oracle where they have a twin: the rows each stream emitted, in all, are the same. A stream
emits the rows of each version that added splits, in version order; a merge emits nothing; a
version that removed rows fails it unless `skipChangeCommits` is set.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery

import delta_oracle
from helpers import FORMAT, read_table, write_table
from indextables import IndexTable, IndexTablesError
from indextables.functions import indexquery

pytestmark = pytest.mark.skipif(
    not delta_oracle.is_installed(), reason="build/package.sh puts Delta Lake's JARs in place"
)

TIMEOUT_S = 120


def _rows(spark: SparkSession, first: int, count: int, files: int = 1) -> DataFrame:
    """Rows of ids first .. first + count - 1, in `files` splits (tasks) of a write."""
    return spark.range(first, first + count, numPartitions=files).select(
        F.col("id"),
        F.element_at(
            F.array(F.lit("INFO"), F.lit("WARN")), (F.col("id") % 2 + 1).cast("int")
        ).alias("level"),
        F.concat(F.lit("request "), F.col("id").cast("string"), F.lit(" served")).alias("message"),
    )


def _append(
    spark: SparkSession, fmt: str, path: str, first: int, count: int, files: int = 1
) -> None:
    _rows(spark, first, count, files).write.format(fmt).mode("append").save(path)


def _drain(
    spark: SparkSession,
    fmt: str,
    source: str,
    out: Path,
    options: dict[str, str] | None = None,
    once: bool = False,
) -> list[dict[str, Any]]:
    """One run of a stream of `source` into the Parquet sink `out` (its checkpoint beside it),
    until it has read what is there (availableNow, or once); the progress of its batches."""
    df = spark.readStream.format(fmt).options(**(options or {})).load(source)
    return _run(df, out, once)


def _run(df: DataFrame, out: Path, once: bool = False) -> list[dict[str, Any]]:
    query = _start(df, out, **({"once": True} if once else {"availableNow": True}))
    try:
        assert query.awaitTermination(TIMEOUT_S), f"the stream into {out} did not finish"
        return [p for p in query.recentProgress if p["numInputRows"] > 0]
    finally:
        query.stop()


def _start(df: DataFrame, out: Path, **trigger: Any) -> StreamingQuery:
    """The stream `df` into the Parquet sink `out`, its checkpoint beside it, started."""
    writer = df.writeStream.format("parquet").option("checkpointLocation", str(out) + "-cp")
    return writer.trigger(**trigger).start(str(out))


def _wait_until(query: StreamingQuery, done: Callable[[], bool]) -> None:
    """Until `done()`, while the running `query` has not failed."""
    deadline = time.monotonic() + TIMEOUT_S
    while not done():
        assert query.exception() is None and time.monotonic() < deadline
        time.sleep(0.1)


def _emitted(spark: SparkSession, out: Path) -> list[int]:
    """Every id the stream into `out` emitted, in all its runs, duplicates kept."""
    if not (out / "_spark_metadata").exists():
        return []
    return sorted(r.id for r in spark.read.parquet(str(out)).select("id").collect())


def _failure(run: Any) -> IndexTablesError:
    with pytest.raises(IndexTablesError) as info:
        run()
    return info.value


class _Twins:
    """One IndexTables table and one Delta table (with deletion vectors), each read by its own
    stream into Parquet."""

    def __init__(self, spark: SparkSession, tmp_path: Path) -> None:
        self.spark = spark
        self.paths = {FORMAT: str(tmp_path / "ours"), "delta": str(tmp_path / "delta")}
        self.outs = {FORMAT: tmp_path / "out-ours", "delta": tmp_path / "out-delta"}
        self.delta: delta_oracle.DeltaTable | None = None

    def append(self, first: int, count: int, files: int = 1) -> None:
        _append(self.spark, FORMAT, self.paths[FORMAT], first, count, files)
        rows = _rows(self.spark, first, count, files)
        if self.delta is None:
            self.delta = delta_oracle.DeltaTable.create(self.spark, self.paths["delta"], rows)
        else:
            self.delta.append(rows)

    def _delta_sql(self, statement: str) -> None:
        assert self.delta is not None
        self.delta.sql(statement)

    def overwrite(self, first: int, count: int) -> None:
        for fmt, path in self.paths.items():
            _rows(self.spark, first, count).write.format(fmt).mode("overwrite").save(path)

    def merge(self) -> None:
        """MERGE SPLITS on ours, OPTIMIZE on Delta's: both rewrite files with dataChange=false."""
        (row,) = self.spark.sql(f"MERGE SPLITS '{self.paths[FORMAT]}'").collect()
        assert row.metrics.status == "success", row.metrics.message
        self._delta_sql("OPTIMIZE {table}")

    def delete(self, condition: str) -> None:
        self.spark.sql(f"DELETE FROM indextables.`{self.paths[FORMAT]}` WHERE {condition}")
        self._delta_sql(f"DELETE FROM {{table}} WHERE {condition}")

    def drain(self, options: dict[str, str] | None = None) -> list[int]:
        """Both streams run; they emitted the same ids in all. Returns ours."""
        for fmt in self.paths:
            _drain(self.spark, fmt, self.paths[fmt], self.outs[fmt], options)
        ours = _emitted(self.spark, self.outs[FORMAT])
        assert ours == _emitted(self.spark, self.outs["delta"])
        return ours


def test_appends_a_merge_and_changes_stream_once_in_order_as_deltas_source(
    spark: SparkSession, tmp_path: Path, layout: str
) -> None:
    twins = _Twins(spark, tmp_path)
    twins.append(0, 40, files=2)
    # The first batch is the table as it stands.
    assert twins.drain() == list(range(40))
    twins.append(40, 20)
    twins.append(60, 20)
    twins.merge()
    # The appends once each; the merge's split is no new row.
    assert twins.drain() == list(range(80))
    history = IndexTable.for_path(spark, twins.paths[FORMAT]).history().collect()
    assert any(h.operation == "MERGE SPLITS" for h in history)

    # A DELETE (deletion vectors) then an append: the stream stops at the DELETE, naming it.
    twins.delete("id < 5")
    twins.append(80, 20)
    deleted_at = max(h.version for h in history) + 1
    error = _failure(lambda: _drain(spark, FORMAT, twins.paths[FORMAT], twins.outs[FORMAT]))
    assert error.error_class == "INDEXTABLES_STREAMING_SOURCE_DATA_CHANGED", error
    assert error.sql_state == "0A000"
    assert f"Version {deleted_at} " in str(error) and "skipChangeCommits" in str(error)
    # Delta's source stops there too.
    with pytest.raises(StreamingQueryException, match="DELTA_SOURCE_TABLE_IGNORE_CHANGES"):
        _drain(spark, "delta", twins.paths["delta"], twins.outs["delta"])
    assert _emitted(spark, twins.outs[FORMAT]) == list(range(80))

    # Restarted from its checkpoint with skipChangeCommits: the DELETE is passed over, the
    # append after it read; so is an overwrite, its rows included.
    skip = {"skipChangeCommits": "true"}
    assert twins.drain(skip) == list(range(100))
    twins.overwrite(100, 20)
    twins.append(120, 20)
    assert twins.drain(skip) == [*range(100), *range(120, 140)]


def test_a_split_with_deleted_rows_serves_only_its_live_rows(
    spark: SparkSession, tmp_path: Path, layout: str
) -> None:
    path, out = str(tmp_path / "ours"), tmp_path / "out"
    _append(spark, FORMAT, path, 0, 90, files=2)
    spark.sql(f"DELETE FROM indextables.`{path}` WHERE id % 3 = 0")
    _drain(spark, FORMAT, path, out)
    live = sorted(r.id for r in read_table(spark, path).select("id").collect())
    assert _emitted(spark, out) == live == [i for i in range(90) if i % 3]


def test_a_stream_stopped_mid_way_and_restarted_emits_every_row_once(
    spark: SparkSession, tmp_path: Path
) -> None:
    path, out = str(tmp_path / "ours"), tmp_path / "out"
    for v in range(4):
        _append(spark, FORMAT, path, v * 30, 30, files=3)
    stream = spark.readStream.format(FORMAT).option("maxFilesPerTrigger", 1).load(path)
    query = _start(stream, out, processingTime="0 seconds")
    _wait_until(query, lambda: bool(query.lastProgress and query.lastProgress["batchId"] >= 2))
    query.stop()  # wherever its batch is
    first = len(set(_emitted(spark, out)))
    assert 0 < first < 120
    _append(spark, FORMAT, path, 120, 30)
    _drain(spark, FORMAT, path, out, {"maxFilesPerTrigger": "5"})
    assert _emitted(spark, out) == list(range(150))


def test_max_files_per_trigger_bounds_each_batch_and_once_reads_all(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "ours")
    _append(spark, FORMAT, path, 0, 50, files=5)
    _append(spark, FORMAT, path, 50, 10)
    batches = _drain(spark, FORMAT, path, tmp_path / "out", {"maxFilesPerTrigger": "2"})
    assert [b["numInputRows"] for b in batches] == [20, 20, 20]
    # Trigger.Once reads everything in one batch, whatever the bound (as Spark asks).
    once = _drain(spark, FORMAT, path, tmp_path / "out-once", {"maxFilesPerTrigger": "2"}, True)
    assert [b["numInputRows"] for b in once] == [60]
    assert _emitted(spark, tmp_path / "out-once") == list(range(60))


def test_starting_version_a_number_or_latest(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "ours")
    for v in range(3):
        _append(spark, FORMAT, path, v * 10, 10)
    _drain(spark, FORMAT, path, tmp_path / "from-1", {"startingVersion": "1"})
    assert _emitted(spark, tmp_path / "from-1") == list(range(10, 30))

    out = tmp_path / "latest"
    stream = spark.readStream.format(FORMAT).option("startingVersion", "latest").load(path)
    query = _start(stream, out, processingTime="100 milliseconds")
    try:
        _wait_until(query, lambda: query.lastProgress is not None)
        _append(spark, FORMAT, path, 30, 10)
        _wait_until(query, lambda: sum(p["numInputRows"] for p in query.recentProgress) >= 10)
    finally:
        query.stop()
    assert _emitted(spark, out) == list(range(30, 40))


def test_a_catalog_table_streams_through_read_stream_table(
    spark: SparkSession, tmp_path: Path
) -> None:
    name = "stream_source_events"
    spark.sql(f"CREATE TABLE {name} (id long, level string, message string) USING indextables")
    try:
        out = tmp_path / "out"
        _rows(spark, 0, 20).writeTo(name).append()
        _run(spark.readStream.table(name), out)
        _rows(spark, 20, 20).writeTo(name).append()
        _run(spark.readStream.table(name), out)
        assert _emitted(spark, out) == list(range(40))
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize(
    ("options", "error_class", "named"),
    [
        ({"maxFilesPerTrigger": "0"}, "INDEXTABLES_INVALID_OPTION", "maxFilesPerTrigger"),
        ({"startingVersion": "first"}, "INDEXTABLES_INVALID_OPTION", "startingVersion"),
        ({"skipChangeCommits": "maybe"}, "INDEXTABLES_INVALID_OPTION", "skipChangeCommits"),
        ({"startingVersion": "99"}, "INDEXTABLES_VERSION_NOT_FOUND", "99"),
        (
            {"spark.indextables.read.stream.maxFilesPerTriger": "5"},
            "INDEXTABLES_UNKNOWN_OPTION",
            "maxFilesPerTrigger",
        ),
    ],
)
def test_a_bad_option_fails_the_stream_naming_it(
    spark: SparkSession,
    tmp_path: Path,
    options: dict[str, str],
    error_class: str,
    named: str,
) -> None:
    path = str(tmp_path / "ours")
    _append(spark, FORMAT, path, 0, 10)
    error = _failure(lambda: _drain(spark, FORMAT, path, tmp_path / "out", options))
    assert error.error_class == error_class, error
    assert named in str(error)


def test_a_checkpoint_of_a_table_since_created_again_is_refused(
    spark: SparkSession, tmp_path: Path
) -> None:
    path, out = str(tmp_path / "ours"), tmp_path / "out"
    _append(spark, FORMAT, path, 0, 10)
    _drain(spark, FORMAT, path, out)
    shutil.rmtree(path)
    spark.sql(f"INVALIDATE INDEXTABLES TRANSACTION LOG CACHE FOR '{path}'").collect()
    write_table(_rows(spark, 100, 10), path)
    error = _failure(lambda: _drain(spark, FORMAT, path, out))
    assert error.error_class == "INDEXTABLES_STREAMING_SOURCE_OFFSET", error
    assert "checkpointLocation" in str(error)
    assert _emitted(spark, out) == list(range(10))


def test_a_column_added_mid_stream_fails_it_and_a_restart_reads_on_with_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    path, out = str(tmp_path / "ours"), tmp_path / "out"
    _append(spark, FORMAT, path, 0, 10)
    query = _start(
        spark.readStream.format(FORMAT).load(path), out, processingTime="100 milliseconds"
    )
    try:
        _wait_until(query, lambda: any(p["numInputRows"] for p in query.recentProgress))
        wider = _rows(spark, 10, 10).withColumn("host", F.concat(F.lit("h"), F.col("id") % 3))
        wider.write.format(FORMAT).mode("append").option("mergeSchema", "true").save(path)
        error = _failure(lambda: query.awaitTermination(TIMEOUT_S))
    finally:
        query.stop()
    assert error.error_class == "INDEXTABLES_STREAMING_SOURCE_SCHEMA_CHANGED", error
    assert "host" in str(error) and "Restart" in str(error)
    # Restarted, it reads on with the new column; nothing was emitted twice.
    _drain(spark, FORMAT, path, out)
    assert _emitted(spark, out) == list(range(20))
    hosts = spark.read.option("mergeSchema", "true").parquet(str(out)).where("id >= 10")
    assert sorted(r.host for r in hosts.collect()) == sorted(f"h{i % 3}" for i in range(10, 20))


def test_a_stream_searched_with_indexquery_emits_only_new_matches(
    spark: SparkSession, tmp_path: Path, layout: str
) -> None:
    """`indexquery` on a stream (in SQL over a temporary view, and through the Python column
    functions): each micro-batch's new splits are searched, so only matching rows come out, and
    the regular conjuncts beside it still apply. The oracle is the same filter over the rows."""
    path = str(tmp_path / "ours")
    texts = ["disk full on node", "connection timeout to db", "request served", "timeout again"]
    levels = ["ERROR", "INFO"]

    def rows(first: int, count: int) -> DataFrame:
        data = [
            (i, levels[(i // 4) % 2], f"{texts[i % 4]} {i}") for i in range(first, first + count)
        ]
        return spark.createDataFrame(data, "id long, level string, message string")

    def expected(upto: int) -> list[int]:
        want = [
            i for i in range(upto) if "timeout" in texts[i % 4] and levels[(i // 4) % 2] == "ERROR"
        ]
        assert want and len(want) < upto / 2, want
        return want

    def searched(upto: int) -> int:
        """The rows the search matches: all a stream reads (the level is Spark's filter)."""
        return sum("timeout" in texts[i % 4] for i in range(upto))

    text = {"spark.indextables.indexing.typemap.message": "text"}
    write_table(rows(0, 40), path, mode="append", options=text)
    write_table(rows(40, 40), path, mode="append", options=text)

    view = f"stream_{layout}"
    spark.readStream.format(FORMAT).load(path).createOrReplaceTempView(view)
    sql = spark.sql(
        f"SELECT id, message FROM {view} WHERE message indexquery 'timeout' AND level = 'ERROR'"
    )
    functions = (
        spark.readStream.format(FORMAT)
        .option("maxFilesPerTrigger", 1)
        .load(path)
        .where(indexquery("message", "timeout") & (F.col("level") == "ERROR"))
        .select("id", "message")
    )
    outs = {"sql": tmp_path / "out-sql", "functions": tmp_path / "out-functions"}
    for name, df in (("sql", sql), ("functions", functions)):
        batches = _run(df, outs[name])
        assert _emitted(spark, outs[name]) == expected(80), name
        # The progress (and the Spark UI) names the search the stream runs; the search's
        # matches alone are read (40 of the 80 rows).
        assert batches and all("timeout" in b["sources"][0]["description"] for b in batches)
        assert sum(b["numInputRows"] for b in batches) == searched(80), batches
    # New splits are searched too, and a restart from the checkpoint searches only those
    # (`_emitted` keeps duplicates: a row emitted twice would show).
    write_table(rows(80, 40), path, mode="append", options=text)
    for name, df in (("sql", sql), ("functions", functions)):
        batches = _run(df, outs[name])
        assert _emitted(spark, outs[name]) == expected(120), name
        assert sum(b["numInputRows"] for b in batches) == searched(120) - searched(80)
    # Filters and plain projections may stand between the search and the stream.
    chained = (
        spark.readStream.format(FORMAT)
        .load(path)
        .where(F.col("id") >= 40)
        .select("id", "level", "message")
        .where(indexquery("message", "timeout") & (F.col("level") == "ERROR"))
    )
    _run(chained, tmp_path / "out-chained")
    assert _emitted(spark, tmp_path / "out-chained") == [i for i in expected(120) if i >= 40]


def test_a_searched_stream_over_splits_with_deleted_rows_emits_only_live_matches(
    spark: SparkSession, tmp_path: Path, layout: str
) -> None:
    """A split with a deletion vector, searched by a stream's `indexquery`: the search's hits
    pass through the vector too, so no deleted row comes out. The oracle: the live rows of the
    table (its own batch read) that the same predicate matches."""
    path, out = str(tmp_path / "ours"), tmp_path / "out"
    data = [(i, f"timeout {i}" if i % 2 else f"ok {i}") for i in range(200)]
    df = spark.createDataFrame(data, "id long, message string").repartition(2)
    write_table(df, path, options={"spark.indextables.indexing.typemap.message": "text"})
    spark.sql(f"DELETE FROM indextables.`{path}` WHERE id % 3 = 0")
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    assert state.num_deletion_vectors > 0 and state.num_deleted_rows == 67, state
    live = read_table(spark, path)
    assert live.count() == 200 - 67
    stream = spark.readStream.format(FORMAT).load(path).where(indexquery("message", "timeout"))
    batches = _run(stream, out)
    want = sorted(r.id for r in live.where(F.col("message").contains("timeout")).collect())
    assert want == [i for i in range(200) if i % 2 and i % 3]
    assert _emitted(spark, out) == want
    assert sum(b["numInputRows"] for b in batches) == len(want), batches


def test_indexquery_on_a_stream_must_filter_its_read_directly(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "ours")
    write_table(
        _rows(spark, 0, 10),
        path,
        mode="append",
        options={"spark.indextables.indexing.typemap.message": "text"},
    )
    # A filter over an aggregate of the stream is no search of its rows: refused as the query
    # is analyzed, before it starts.
    error = _failure(
        lambda: (
            spark.readStream.format(FORMAT)
            .load(path)
            .groupBy("message")
            .count()
            .where(indexquery("message", "served"))
        )
    )
    assert error.error_class == "INDEXTABLES_INDEXQUERY_ON_STREAM", error
    assert "Aggregate" in str(error), error
