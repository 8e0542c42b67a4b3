"""The Structured Streaming sink (issue 32): `writeStream.format("indextables")`, exactly once.

Every stream runs as users run one, against the built JAR, and the same stream into Delta Lake's
sink (delta-spark, in the suite's session) is the oracle: after each run both tables hold the
same rows. A micro-batch commits one log version recording the query's id and the batch's epoch;
a batch Spark replays (its checkpoint lost the batch's commit) commits nothing.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

import delta_oracle
from helpers import (
    FORMAT,
    assert_same_rows,
    read_table,
    scan_metrics,
    split_files,
    version_actions,
)
from indextables import IndexTable, IndexTablesError, SchemaMismatchError
from killed_driver import KilledDriver

pytestmark = pytest.mark.skipif(
    not delta_oracle.is_installed(), reason="build/package.sh puts Delta Lake's JARs in place"
)

SCHEMA = "id long, day string, level string, message string"
LEVELS = ("INFO", "WARN", "ERROR")
TIMEOUT_S = 120


def _land(folder: Path, first: int, files: int, rows_per_file: int = 20) -> None:
    """`files` JSON files of distinct ids from `first` on, written whole (a file source lists a
    folder and reads each new file once)."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        start = first + f * rows_per_file
        lines = [
            json.dumps(
                {
                    "id": i,
                    "day": f"2026-11-{20 + i % 2}",
                    "level": LEVELS[i % 3],
                    "message": f"request {i} served by host-{i % 7}",
                }
            )
            for i in range(start, start + rows_per_file)
        ]
        part = folder / f"part-{start:06d}.json"
        tmp = folder / f".{part.name}.tmp"
        tmp.write_text("\n".join(lines) + "\n")
        tmp.rename(part)


def _source(spark: SparkSession, folder: Path, max_files: int | None = None) -> DataFrame:
    reader = spark.readStream.schema(SCHEMA)
    if max_files is not None:
        reader = reader.option("maxFilesPerTrigger", max_files)
    return reader.json(str(folder))


def _run(df: DataFrame, fmt: str, path: str, checkpoint: Path, mode: str = "append") -> None:
    """One run of the stream until the source has nothing new (availableNow), then stopped."""
    writer = (
        df.writeStream.format(fmt)
        .outputMode(mode)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
    )
    query = writer.start(path)
    try:
        assert query.awaitTermination(TIMEOUT_S), f"the stream into {path} did not finish"
        assert query.exception() is None, query.exception()
    finally:
        query.stop()


def _run_both(stream: Callable[[], DataFrame], tmp_path: Path, mode: str = "append") -> None:
    """One run of the same stream into our table (`ours`) and into Delta's (`delta`), each
    restarted from its own checkpoint (`cp-ours`, `cp-delta`)."""
    _run(stream(), FORMAT, str(tmp_path / "ours"), tmp_path / "cp-ours", mode)
    _run(stream(), "delta", str(tmp_path / "delta"), tmp_path / "cp-delta", mode)


def _rounds(
    spark: SparkSession,
    tmp_path: Path,
    rounds: int,
    query: Callable[[DataFrame], DataFrame] = lambda df: df,
    mode: str = "append",
) -> tuple[str, Path]:
    """`rounds` runs of one stream (`query` over the files of `landing`) into both sinks, two
    new files landed before each; after each run our table holds Delta's rows. Returns our
    table's path and Delta's."""
    landing, ours, delta = tmp_path / "landing", str(tmp_path / "ours"), tmp_path / "delta"
    for run in range(rounds):
        _land(landing, run * 100, files=2)
        _run_both(lambda: query(_source(spark, landing)), tmp_path, mode)
        assert_same_rows(read_table(spark, ours), _delta(spark, delta))
    return ours, delta


def _delta(spark: SparkSession, path: Path) -> DataFrame:
    return spark.read.format("delta").load(str(path))


def _history(spark: SparkSession, path: str) -> list[Any]:
    """The table's commits, oldest first."""
    return sorted(IndexTable.for_path(spark, path).history().collect(), key=lambda h: h.version)


def _streaming_commits(spark: SparkSession, path: str) -> list[tuple[str, int]]:
    """(query id, epoch) of each version a stream committed, oldest first."""
    return [
        (h.operation_parameters["queryId"], int(h.operation_parameters["epochId"]))
        for h in _history(spark, path)
        if "epochId" in (h.operation_parameters or {})
    ]


def test_a_stream_restarted_from_its_checkpoint_lands_every_row_once_as_delta_does(
    spark: SparkSession, tmp_path: Path, layout: str
) -> None:
    batches = 4
    ours, _ = _rounds(spark, tmp_path, batches)
    commits = _streaming_commits(spark, ours)
    # One version per batch, all of one query (its id survives restarts), epochs in order.
    assert len(_history(spark, ours)) == batches == len(commits)
    assert len({q for q, _ in commits}) == 1
    assert [e for _, e in commits] == list(range(batches))
    assert read_table(spark, ours).count() == 4 * 2 * 20


# The killed driver's stream: one file per batch, batches back to back, until it is killed.
KILLED_STREAM = f"""
table, landing, checkpoint = args
query = (
    spark.readStream.schema("{SCHEMA}")
    .option("maxFilesPerTrigger", 1)
    .json(landing)
    .writeStream.format("indextables")
    .option("checkpointLocation", checkpoint)
    .trigger(processingTime="0 seconds")
    .start(table)
)
query.awaitTermination()
"""


def test_a_driver_killed_mid_stream_then_restarted_lands_every_row_once(
    spark: SparkSession, tmp_path: Path
) -> None:
    landing, ours, checkpoint = tmp_path / "landing", tmp_path / "ours", tmp_path / "cp-ours"
    _land(landing, 0, files=8, rows_per_file=200)
    driver = KilledDriver(
        tmp_path / "driver", KILLED_STREAM, [str(ours), str(landing), str(checkpoint)]
    )
    log = ours / "_transaction_log"

    def versions() -> int:
        return len(list(log.glob("0*.json"))) if log.exists() else 0

    try:
        # Killed wherever its third batch is: writing splits, committing, or between the
        # table's commit and the checkpoint's.
        driver.run_until(lambda: versions() >= 2, "two batches in the table")
    finally:
        driver.kill()
    assert versions() < 8
    _run(_source(spark, landing, max_files=1), FORMAT, str(ours), checkpoint)
    # The source's rows are the oracle here: each file once.
    assert_same_rows(read_table(spark, str(ours)), spark.read.schema(SCHEMA).json(str(landing)))
    epochs = [e for _, e in _streaming_commits(spark, str(ours))]
    assert epochs == sorted(set(epochs)) and len(_history(spark, str(ours))) == 8


def test_a_replayed_batch_commits_nothing_and_writes_no_split(
    spark: SparkSession, tmp_path: Path, layout: str
) -> None:
    landing = tmp_path / "landing"
    ours, delta = _rounds(spark, tmp_path, 2)
    versions = len(_history(spark, ours))
    splits = split_files(ours)
    # The driver died after the batch's version file, before its commit record and before
    # Spark's own commit: the checkpoint then holds the batch's offsets but not its commit, and
    # Spark runs the batch again on restart. The record in the version's metadata decides.
    last = versions - 1
    (Path(ours) / "_transaction_log" / "_commit_info" / f"{last:020d}.json").unlink()
    for checkpoint in (tmp_path / "cp-ours", tmp_path / "cp-delta"):
        (checkpoint / "commits" / "1").unlink()
        (checkpoint / "commits" / ".1.crc").unlink(missing_ok=True)
    _run_both(lambda: _source(spark, landing), tmp_path)
    assert len(_history(spark, ours)) == versions
    assert split_files(ours) == splits
    assert_same_rows(read_table(spark, ours), _delta(spark, delta))
    assert read_table(spark, ours).count() == 2 * 2 * 20
    # The stream goes on with the next batch after the replay.
    _land(landing, 500, files=1)
    _run_both(lambda: _source(spark, landing), tmp_path)
    assert len(_history(spark, ours)) == versions + 1
    # Version 1 lost its commit record above; the others name their epochs.
    assert [e for _, e in _streaming_commits(spark, ours)] == [0, 2]
    assert_same_rows(read_table(spark, ours), _delta(spark, delta))


def test_available_now_over_a_folder_of_50_files_as_delta_does(
    spark: SparkSession, tmp_path: Path
) -> None:
    landing, ours, delta = tmp_path / "landing", str(tmp_path / "ours"), tmp_path / "delta"
    _land(landing, 0, files=50, rows_per_file=10)
    _run_both(lambda: _source(spark, landing, max_files=10), tmp_path)
    assert_same_rows(read_table(spark, ours), _delta(spark, delta))
    assert read_table(spark, ours).count() == 500
    assert [e for _, e in _streaming_commits(spark, ours)] == [0, 1, 2, 3, 4]


def test_a_rate_stream_stopped_and_restarted_lands_each_value_once(
    spark: SparkSession, tmp_path: Path
) -> None:
    table, checkpoint = str(tmp_path / "rate"), tmp_path / "cp"
    for _ in range(3):
        query = (
            spark.readStream.format("rate")
            .option("rowsPerSecond", 200)
            .load()
            .selectExpr("value", "cast(value % 5 as string) AS bucket")
            .writeStream.format(FORMAT)
            .option("checkpointLocation", str(checkpoint))
            .trigger(processingTime="300 milliseconds")
            .start(table)
        )
        deadline = time.monotonic() + TIMEOUT_S
        while query.lastProgress is None or query.lastProgress["batchId"] < 2:
            assert query.exception() is None and time.monotonic() < deadline
            time.sleep(0.2)
        query.stop()  # wherever the batch is
    values = [r.value for r in read_table(spark, table).select("value").collect()]
    assert len(values) == len(set(values)) > 0
    assert sorted(values) == list(range(max(values) + 1))


def test_two_queries_writing_one_table_at_once_both_land_once(
    spark: SparkSession, tmp_path: Path
) -> None:
    table = str(tmp_path / "shared")
    _land(tmp_path / "seed", 10_000, files=1)
    spark.read.schema(SCHEMA).json(str(tmp_path / "seed")).write.format(FORMAT).save(table)
    queries = []
    for q in range(2):
        landing = tmp_path / f"landing-{q}"
        _land(landing, q * 1000, files=4)
        queries.append(
            _source(spark, landing, max_files=1)
            .writeStream.format(FORMAT)
            .option("checkpointLocation", str(tmp_path / f"cp-{q}"))
            .trigger(availableNow=True)
            .start(table)
        )
    for query in queries:
        assert query.awaitTermination(TIMEOUT_S) and query.exception() is None
    expected = spark.read.schema(SCHEMA).json(
        [str(tmp_path / d) for d in ("seed", "landing-0", "landing-1")]
    )
    assert_same_rows(read_table(spark, table), expected)
    commits = _streaming_commits(spark, table)
    # Each query's 4 batches, one version each, in its own epoch order whatever the interleaving.
    for query in queries:
        assert [e for q, e in commits if q == query.id] == [0, 1, 2, 3]
    assert len(commits) == 8


def test_complete_mode_replaces_the_table_with_each_batch_as_delta_does(
    spark: SparkSession, tmp_path: Path, layout: str
) -> None:
    ours, _ = _rounds(spark, tmp_path, 2, lambda df: df.groupBy("level").count(), "complete")
    assert sum(r["count"] for r in read_table(spark, ours).collect()) == 2 * 2 * 20
    last = _history(spark, ours)[-1]
    assert last.operation == "STREAMING UPDATE"
    assert last.operation_parameters["outputMode"] == "Complete"


def test_the_update_output_mode_is_refused_when_the_stream_starts(
    spark: SparkSession, tmp_path: Path
) -> None:
    landing, ours = tmp_path / "landing", tmp_path / "ours"
    _land(landing, 0, files=1)
    counts = _source(spark, landing).groupBy("level").count()
    with pytest.raises(IndexTablesError) as info:
        (
            counts.writeStream.format(FORMAT)
            .outputMode("update")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .start(str(ours))
        )
    assert info.value.error_class == "INDEXTABLES_STREAMING_OUTPUT_MODE", info.value
    assert info.value.sql_state == "0A000"
    assert "update" in str(info.value).lower() and str(ours) in str(info.value)
    assert not ours.exists()


def test_an_unknown_write_option_fails_the_stream_as_it_fails_a_batch_write(
    spark: SparkSession, tmp_path: Path
) -> None:
    landing = tmp_path / "landing"
    _land(landing, 0, files=1)
    bogus = {"spark.indextables.write.optimizeWrite.enabeld": "true"}
    # A path sink: when the stream starts.
    with pytest.raises(IndexTablesError) as at_start:
        (
            _source(spark, landing)
            .writeStream.format(FORMAT)
            .option("checkpointLocation", str(tmp_path / "cp"))
            .options(**bogus)
            .start(str(tmp_path / "ours"))
        )
    assert at_start.value.error_class == "INDEXTABLES_UNKNOWN_OPTION", at_start.value
    assert "optimizeWrite.enabled" in str(at_start.value)
    # A catalog table: Spark gives the sink its options with each batch, so the first fails.
    name = "stream_sink_unknown_option"
    spark.sql(f"CREATE TABLE {name} ({SCHEMA}) USING indextables")
    try:
        query = (
            _source(spark, landing)
            .writeStream.options(**bogus)
            .option("checkpointLocation", str(tmp_path / "cp-name"))
            .trigger(availableNow=True)
            .toTable(name)
        )
        # The query's failure arrives as the error it failed with.
        with pytest.raises(IndexTablesError) as in_batch:
            query.awaitTermination(TIMEOUT_S)
        assert in_batch.value.error_class == "INDEXTABLES_UNKNOWN_OPTION", in_batch.value
        assert spark.table(name).count() == 0
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_many_small_batches_with_merge_on_write_merge_ten_at_a_time_and_stay_few(
    spark: SparkSession, tmp_path: Path
) -> None:
    # The bound: merge on write merges a size tier of a partition once it holds mergeFactor (10)
    # splits, so after every batch's merge a partition holds at most 9 splits of each tier below
    # 0.45 x targetSize. These 10-row splits and their merges are all of the smallest tier
    # (below targetSize / 1000), so each merge takes the 10 splits there, the last merge's
    # included: merges at batches 10, 19, 28 and 37, and 4 splits after 40. Synchronous, so that
    # the bound holds at every commit, not after a merge catches up.
    landing, table, batches = tmp_path / "landing", str(tmp_path / "ours"), 40
    _land(landing, 0, files=batches, rows_per_file=10)
    query = (
        _source(spark, landing, max_files=1)
        .writeStream.format(FORMAT)
        .option("spark.indextables.mergeOnWrite.enabled", "true")
        .option("spark.indextables.mergeOnWrite.async.enabled", "false")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start(table)
    )
    assert query.awaitTermination(TIMEOUT_S) and query.exception() is None
    assert len(_streaming_commits(spark, table)) == batches
    history = _history(spark, table)
    merges = [h for h in history if h.operation == "MERGE ON WRITE"]
    assert [(h.files_removed, h.files_added) for h in merges] == [(10, 1)] * 4, merges
    assert all(h.operation_parameters.get("mergeFactor") == "10" for h in merges), merges
    (state,) = IndexTable.for_path(spark, table).describe().collect()
    assert state.num_files == 4 and state.num_records == batches * 10, state
    assert read_table(spark, table).count() == batches * 10


def test_a_partitioned_catalog_sink_merges_on_write_and_writes_optimized(
    spark: SparkSession, tmp_path: Path
) -> None:
    landing, delta = tmp_path / "landing", tmp_path / "delta"
    name = "stream_sink_partitioned"
    options = {
        "spark.indextables.mergeOnWrite.enabled": "true",
        "spark.indextables.mergeOnWrite.async.enabled": "false",
        "spark.indextables.mergeOnWrite.targetSize": "100M",
        "spark.indextables.mergeOnWrite.minBatchesToTrigger": "1",
        # Two splits of a tier merge (the default waits for ten): a day merges every other batch.
        "spark.indextables.mergeOnWrite.mergeFactor": "2",
        "spark.indextables.write.optimizeWrite.enabled": "true",
    }
    _land(landing, 0, files=8)
    try:
        query = (
            _source(spark, landing, max_files=1)
            .writeStream.format(FORMAT)
            .partitionBy("day")
            .options(**options)
            .option("checkpointLocation", str(tmp_path / "cp-ours"))
            .trigger(availableNow=True)
            .toTable(name)
        )
        assert query.awaitTermination(TIMEOUT_S) and query.exception() is None
        _run(_source(spark, landing, max_files=1), "delta", str(delta), tmp_path / "cp-delta")
        assert_same_rows(spark.table(name), _delta(spark, delta))
        table = IndexTable.for_name(spark, name)
        history = table.history().collect()
        operations = {h.operation for h in history}
        assert "MERGE ON WRITE" in operations, operations
        batches = [h for h in history if h.operation_parameters.get("epochId") is not None]
        assert len(batches) == 8
        assert all(b.operation_parameters.get("optimizeWrite") == "hash" for b in batches)
        (state,) = table.describe().collect()
        # 8 batches of 2 days each wrote 16 splits; merged, at most a few per day remain.
        written = sum(h.files_added for h in batches)
        assert written == 16 and state.num_files <= 4, (written, state.num_files)
        (location,) = [
            r.data_type
            for r in spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
            if r.col_name == "Location"
        ]
        properties = {r.key for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}
        assert not [k for k in properties if k.startswith("indextables.streaming.")], properties
        days = sorted(p.name for p in Path(location.removeprefix("file:")).glob("day=*"))
        assert days == ["day=2026-11-20", "day=2026-11-21"]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        shutil.rmtree(delta, ignore_errors=True)


def test_a_path_sink_is_partitioned_by_its_partition_by_columns_as_delta_does(
    spark: SparkSession, tmp_path: Path, layout: str
) -> None:
    # Spark hands a stream's partitionBy columns to a V1 sink only (StreamSinkProvider), never
    # to a DataSource V2 table: before the path sink took that route they were dropped.
    landing, ours, delta = tmp_path / "landing", str(tmp_path / "ours"), tmp_path / "delta"
    _land(landing, 0, files=3)
    for fmt, path, checkpoint in ((FORMAT, ours, "cp-ours"), ("delta", str(delta), "cp-delta")):
        query = (
            _source(spark, landing, max_files=1)
            .writeStream.format(fmt)
            .partitionBy("day")
            .option("checkpointLocation", str(tmp_path / checkpoint))
            .trigger(availableNow=True)
            .start(path)
        )
        assert query.awaitTermination(TIMEOUT_S) and query.exception() is None
    assert_same_rows(read_table(spark, ours), _delta(spark, delta))
    assert [e for _, e in _streaming_commits(spark, ours)] == [0, 1, 2]
    (metadata,) = [a["metaData"] for a in version_actions(ours, 0) if "metaData" in a]
    assert metadata["partitionColumns"] == ["day"], metadata
    adds = [a["add"] for v in range(3) for a in version_actions(ours, v) if "add" in a]
    assert {a["partitionValues"]["day"] for a in adds} == {"2026-11-20", "2026-11-21"}, adds
    assert all(a["path"].startswith(f"day={a['partitionValues']['day']}/") for a in adds), adds
    # A partition filter prunes: the scan reads one day's splits of each batch, not both.
    one_day = read_table(spark, ours).filter("day = '2026-11-21'")
    assert len(one_day.collect()) == 30
    assert scan_metrics(one_day)["splitsPrunedByPartition"] == 3, scan_metrics(one_day)


def test_a_partition_by_other_than_the_tables_is_refused_by_a_stream_and_a_batch_write(
    spark: SparkSession, tmp_path: Path
) -> None:
    landing, ours = tmp_path / "landing", str(tmp_path / "ours")
    _land(landing, 0, files=1)
    spark.read.schema(SCHEMA).json(str(landing)).write.format(FORMAT).partitionBy("day").save(ours)
    versions = len(_history(spark, ours))
    with pytest.raises(SchemaMismatchError) as stream:
        (
            _source(spark, landing)
            .writeStream.format(FORMAT)
            .partitionBy("level")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .start(ours)
        )
    with pytest.raises(SchemaMismatchError) as batch:
        spark.read.schema(SCHEMA).json(str(landing)).write.format(FORMAT).partitionBy("level").mode(
            "append"
        ).save(ours)
    for raised in (stream.value, batch.value):
        assert raised.error_class == "INDEXTABLES_PARTITIONING_MISMATCH", raised
        assert "[day]" in str(raised) and "[level]" in str(raised), raised
    assert len(_history(spark, ours)) == versions
    # Naming the table's partitioning, or none, appends.
    for by in (("day",), ()):
        spark.read.schema(SCHEMA).json(str(landing)).write.format(FORMAT).partitionBy(*by).mode(
            "append"
        ).save(ours)
    assert read_table(spark, ours).count() == 3 * 20


def _merge_jobs(spark: SparkSession, table: str) -> list[Any]:
    """The merge-on-write jobs of this driver on `table`, oldest first."""
    return [
        j
        for j in spark.sql("DESCRIBE INDEXTABLES MERGE JOBS").collect()
        if j.table_path.rstrip("/").endswith(table.rstrip("/"))
    ]


@pytest.mark.line_neutral
def test_the_batches_that_land_while_a_merge_runs_are_merged_once_it_ends(
    spark: SparkSession, tmp_path: Path, layout: str
) -> None:
    # A stream's batches that commit while their table is being merged start no merge of their
    # own (one merge per table at a time). Once that merge ends, the table is looked at again,
    # so the stream's last batches are merged without waiting for the table's next write.
    landing, table, big, batches = tmp_path / "landing", str(tmp_path / "ours"), 600_000, 4
    options = {
        "spark.indextables.mergeOnWrite.enabled": "true",
        "spark.indextables.mergeOnWrite.targetSize": "1G",
        "spark.indextables.mergeOnWrite.minBatchesToTrigger": "1",
        # Two splits of a size tier merge, and every split here is of the smallest (below 1G / 8).
        "spark.indextables.mergeOnWrite.mergeFactor": "2",
    }
    _land(landing, 10 * big, files=batches, rows_per_file=10)
    for first in (0, big):
        # Two large splits: the second write's commit starts a merge of both, which outlasts
        # the stream's batches below.
        rows = spark.range(first, first + big, numPartitions=1).selectExpr(
            "id",
            "concat('2026-11-', 20 + id % 2) AS day",
            "element_at(array('INFO', 'WARN', 'ERROR'), cast(id % 3 + 1 AS int)) AS level",
            "concat('request ', id, ' served by host-', id % 7) AS message",
        )
        rows.write.format(FORMAT).mode("append").options(**options).save(table)
    query = (
        _source(spark, landing, max_files=1)
        .writeStream.format(FORMAT)
        .options(**options)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start(table)
    )
    assert query.awaitTermination(TIMEOUT_S) and query.exception() is None
    assert len(_streaming_commits(spark, table)) == batches
    last_batch = max(
        h.version for h in _history(spark, table) if "epochId" in (h.operation_parameters or {})
    )
    first_merge, *later = _merge_jobs(spark, table)
    assert first_merge.status == "RUNNING", (
        "the first merge ended before the stream's batches did, so the test shows nothing: "
        f"make the two large splits larger ({first_merge})"
    )
    # The merge the batches are owed is listed while it waits, naming the last batch's version,
    # so that nobody polling the jobs takes the end of the first merge for the end of merging.
    assert [j.status for j in later] == ["PENDING"], later
    assert later[0].trigger_version == last_batch, (last_batch, later)
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        jobs = _merge_jobs(spark, table)
        (state,) = IndexTable.for_path(spark, table).describe().collect()
        if state.num_files == 1 and all(j.status not in ("RUNNING", "PENDING") for j in jobs):
            break
        assert time.monotonic() < deadline, (state.num_files, jobs)
        time.sleep(0.5)
    assert all(j.status == "COMPLETED" for j in jobs), jobs
    assert state.num_records == 2 * big + batches * 10
    assert read_table(spark, table).count() == 2 * big + batches * 10
