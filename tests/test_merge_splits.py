"""MERGE SPLITS and merge on write, end to end from PySpark.

Every merge is checked as a user would: the table gives the same rows before and after (against
a Parquet copy of the data), filters are still pushed to the scan, the version the merge wrote
holds only dataChange=false removes and adds, and the merged split files are on disk with the
statistics, footer offsets and doc mapping the protocol's AddAction asks for. Also: the WHERE,
TARGET SIZE, MAX DEST SPLITS and MAX SOURCE SPLITS PER MERGE clauses, errors naming the thing
at fault, a merge racing four appending writer processes, and a merge whose JVM is killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

import indextables
from helpers import (
    assert_same_rows,
    error_text,
    read_table,
    scan_node,
    split_files,
    version_actions,
    write_table,
)
from indextables import IndexTablesError, convert_exception
from storage_servers import S3Server

pytestmark = pytest.mark.usefixtures("layout")

TESTS_DIR = Path(__file__).resolve().parent
PATIENCE_S = 600.0
SCHEMA = "id long, hour int, msg string, score double"


def _rows(spark: SparkSession, first: int, n: int) -> DataFrame:
    """n rows from id `first`: hours 8, 9 and 10, a message with a word per id and a score."""
    return (
        spark.range(first, first + n)
        .select(
            F.col("id"),
            (F.col("id") % 3 + 8).cast("int").alias("hour"),
            F.concat(F.lit("event w"), (F.col("id") % 97).cast("string"), F.lit(" done")).alias(
                "msg"
            ),
            (F.col("id") * 0.5).alias("score"),
        )
        .coalesce(1)
    )


def _appended_table(spark: SparkSession, path: str, appends: int, per: int) -> DataFrame:
    """A table partitioned by hour, made of `appends` appends (a split per hour each), and the
    union of what was written, for the oracle."""
    written = None
    for i in range(appends):
        df = _rows(spark, i * per, per)
        write_table(df, path, "append", partition_by=("hour",))
        written = df if written is None else written.union(df)
    assert written is not None
    return written


def _state(spark: SparkSession, path: str) -> Row:
    (row,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    return row


def _live(spark: SparkSession, path: str) -> list[Row]:
    return spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()


def _merge(spark: SparkSession, sql: str) -> Row:
    (row,) = spark.sql(sql).collect()
    return row


def _error(spark: SparkSession, sql: str) -> IndexTablesError:
    with pytest.raises(Exception) as info:
        spark.sql(sql).collect()
    converted = convert_exception(info.value)
    assert isinstance(converted, IndexTablesError), error_text(info.value)
    return converted


@pytest.fixture
def parquet(tmp_path: Path) -> Callable[[DataFrame], DataFrame]:
    def write(df: DataFrame) -> DataFrame:
        out = str(tmp_path / "oracle.parquet")
        df.write.mode("overwrite").parquet(out)
        return df.sparkSession.read.parquet(out)

    return write


def test_merge_keeps_every_row_the_statistics_and_pushdown(
    spark: SparkSession, tmp_table: str, parquet: Callable[[DataFrame], DataFrame]
) -> None:
    oracle = parquet(_appended_table(spark, tmp_table, appends=6, per=300))
    before = _state(spark, tmp_table)
    assert before.num_files == 18
    live_before = {r.path for r in _live(spark, tmp_table)}

    row = _merge(spark, f"MERGE SPLITS '{tmp_table}'")
    assert row.metrics.status == "success", row.metrics.message
    assert (row.metrics.merged_files, row.metrics.merge_groups) == (18, 3)
    assert row.version == before.version + 1
    assert row.metrics.original_size_bytes == before.size_in_bytes

    after = _state(spark, tmp_table)
    assert (after.version, after.num_files, after.num_records) == (row.version, 3, 1800)
    assert_same_rows(read_table(spark, tmp_table), oracle)

    # The version: the 18 sources removed and 3 splits added, none of them a data change.
    actions = version_actions(tmp_table, row.version)
    removes = [a["remove"] for a in actions if "remove" in a]
    adds = [a["add"] for a in actions if "add" in a]
    assert {r["path"] for r in removes} == live_before
    assert len(adds) == 3 and not any(a["dataChange"] for a in adds + removes)
    by_hour = {a["partitionValues"]["hour"]: a for a in adds}
    assert set(by_hour) == {"8", "9", "10"}
    for hour, add in by_hour.items():
        assert add["path"].startswith(f"hour={hour}/")
        assert add["numRecords"] == 600
        assert add["hasFooterOffsets"] and 0 < add["footerStartOffset"] < add["footerEndOffset"]
        assert add["footerEndOffset"] <= add["size"]
        assert add["docMappingRef"] or add["docMappingJson"]
        assert add["numMergeOps"] == 1
        file = Path(tmp_table) / add["path"]
        assert file.is_file() and file.stat().st_size == add["size"]
        ids = oracle.where(f"hour = {hour}")
        stats = ids.agg(F.min("id"), F.max("id"), F.min("msg"), F.max("msg")).first()
        assert stats is not None
        assert (add["minValues"]["id"], add["maxValues"]["id"]) == (str(stats[0]), str(stats[1]))
        assert (add["minValues"]["msg"], add["maxValues"]["msg"]) == (stats[2], stats[3])
    # The sources stay on disk (PURGE deletes them) and the history names the merge.
    assert all((Path(tmp_table) / p).is_file() for p in live_before)
    (latest, *_) = spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{tmp_table}'").collect()
    assert latest.operation == "MERGE SPLITS"

    # Filters on the merged splits are still pushed down, and answer as Parquet does.
    table = read_table(spark, tmp_table)
    for cond in (
        F.col("msg").contains("w42"),
        (F.col("id") > 100) & (F.col("id") <= 140),
        (F.col("hour") == 9) & (F.col("score") < 30.0),
    ):
        filtered = table.where(cond)
        assert "PushedFilters: [" in scan_node(filtered)
        assert_same_rows(filtered, oracle.where(cond))
    assert "w42" in scan_node(table.where(F.col("msg") == "event w42 done"))

    # A second run finds nothing left to merge.
    again = _merge(spark, f"merge splits '{tmp_table}'")
    assert again.metrics.status == "no_action" and again.version is None


def test_where_on_partitions_compares_typed_values(
    spark: SparkSession, tmp_table: str, parquet: Callable[[DataFrame], DataFrame]
) -> None:
    oracle = parquet(_appended_table(spark, tmp_table, appends=3, per=90))
    read_table(spark, tmp_table).createOrReplaceTempView("merge_where_view")
    # hour > 9 on an int partition: only hour 10 (as strings, '10' < '9' and nothing merges).
    row = _merge(spark, "MERGE SPLITS merge_where_view WHERE hour > 9")
    assert (row.metrics.status, row.metrics.merged_files, row.metrics.merge_groups) == (
        "success",
        3,
        1,
    )
    counts: dict[str, int] = {}
    for r in _live(spark, tmp_table):
        hour = r.partition_values["hour"]
        counts[hour] = counts.get(hour, 0) + 1
    assert counts == {"8": 3, "9": 3, "10": 1}
    assert_same_rows(read_table(spark, tmp_table), oracle)
    row = _merge(spark, f"MERGE SPLITS '{tmp_table}' WHERE hour IN (8) OR hour = 11")
    assert (row.metrics.merged_files, row.metrics.merge_groups) == (3, 1)
    assert_same_rows(read_table(spark, tmp_table), oracle)


def test_target_size_and_limits_are_honoured(
    spark: SparkSession, tmp_table: str, parquet: Callable[[DataFrame], DataFrame]
) -> None:
    oracle = parquet(_appended_table(spark, tmp_table, appends=6, per=60))
    row = _merge(spark, f"MERGE SPLITS '{tmp_table}' MAX SOURCE SPLITS PER MERGE 2")
    # Six splits per hour, two per merge: three merged splits per hour.
    assert (row.metrics.merged_files, row.metrics.merge_groups) == (18, 9)
    assert _state(spark, tmp_table).num_files == 9
    row = _merge(spark, f"MERGE SPLITS '{tmp_table}' TARGET SIZE 1G MAX DEST SPLITS 1")
    assert (row.metrics.merged_files, row.metrics.merge_groups) == (3, 1)
    assert _state(spark, tmp_table).num_files == 7
    assert_same_rows(read_table(spark, tmp_table), oracle)

    # TARGET SIZE: with a target just above the live splits' sizes, splits at 45% of it or
    # more stay and the rest pack greedily (in log order) up to it, as computed here.
    live = sorted(_live(spark, tmp_table), key=lambda r: r.modification_time)
    biggest = max(r.size for r in live)
    target = max(1 << 20, int(biggest / 0.45) + 1)
    assert all(r.size < 0.45 * target for r in live)
    expected_groups = 0
    for hour in ("8", "9", "10"):
        sizes = [r.size for r in live if r.partition_values["hour"] == hour]
        group: list[int] = []
        for s in sizes:
            if group and sum(group) + s > target:
                expected_groups += len(group) >= 2
                group = []
            group.append(s)
        expected_groups += len(group) >= 2
    row = _merge(spark, f"MERGE SPLITS '{tmp_table}' TARGET SIZE '{target}'")
    assert row.metrics.merge_groups == expected_groups
    assert_same_rows(read_table(spark, tmp_table), oracle)


def test_bad_input_names_the_thing_at_fault(spark: SparkSession, tmp_path: Path) -> None:
    missing = str(tmp_path / "nothing_here")
    e = _error(spark, f"MERGE SPLITS '{missing}'")
    assert e.error_class == "INDEXTABLES_TABLE_NOT_FOUND" and missing in e.message

    path = str(tmp_path / "t")
    write_table(_rows(spark, 0, 30), path, partition_by=("hour",))
    e = _error(spark, f"MERGE SPLITS '{path}' WHERE score > 3")
    assert e.error_class == "INDEXTABLES_MERGE_WHERE_NOT_PARTITION"
    assert "'score'" in e.message and "hour" in e.message
    e = _error(spark, f"MERGE SPLITS '{path}' WHERE hour >")
    assert e.error_class == "INDEXTABLES_INVALID_MERGE_WHERE"
    for clause, value in (
        ("TARGET SIZE", "lots"),
        ("TARGET SIZE", "10K"),
        ("MAX DEST SPLITS", "0"),
        ("MAX SOURCE SPLITS PER MERGE", "1"),
    ):
        e = _error(spark, f"MERGE SPLITS '{path}' {clause} {value}")
        assert e.error_class == "INDEXTABLES_INVALID_MERGE_OPTION"
        assert clause in e.message and f"'{value}'" in e.message
    # An unknown table name: INDEXTABLES_TABLE_NOT_FOUND naming it, as for any command.
    with pytest.raises(indextables.TableNotFoundError) as info:
        spark.sql("MERGE SPLITS no_such_view_for_merge").collect()
    assert "INDEXTABLES_TABLE_NOT_FOUND" in str(info.value)
    assert "no_such_view_for_merge" in str(info.value)
    assert _state(spark, path).version == 0


def test_merge_on_write_merges_in_the_background(
    spark: SparkSession, tmp_table: str, parquet: Callable[[DataFrame], DataFrame]
) -> None:
    options = {
        "spark.indextables.mergeOnWrite.enabled": "true",
        "spark.indextables.mergeOnWrite.targetSize": "100M",
        "spark.indextables.mergeOnWrite.minBatchesToTrigger": "3",
        # Two splits of a size tier make a merge group (the default is ten).
        "spark.indextables.mergeOnWrite.mergeFactor": "2",
    }
    written = None
    for i in range(4):
        df = _rows(spark, i * 50, 50)
        write_table(df, tmp_table, "append", partition_by=("hour",), options=options)
        written = df if written is None else written.union(df)
    assert written is not None
    oracle = parquet(written)
    # The first write left 3 splits (3 partitions with one each: no merge group), the second
    # 6 (3 groups: enough), so it started a merge; later writes start one when it is done.
    deadline = time.monotonic() + PATIENCE_S
    while True:
        jobs = [
            j
            for j in spark.sql("DESCRIBE INDEXTABLES MERGE JOBS").collect()
            if j.table_path.rstrip("/").endswith(tmp_table.rstrip("/"))
        ]
        if jobs and all(j.status not in ("RUNNING", "PENDING") for j in jobs):
            break
        assert time.monotonic() < deadline, jobs
        time.sleep(0.2)
    assert all(j.status == "COMPLETED" for j in jobs), jobs
    assert jobs[0].trigger_version == 1 and jobs[0].total_groups == 3
    assert jobs[0].commit_version is not None and jobs[0].merged_files == 6
    assert_same_rows(read_table(spark, tmp_table), oracle)
    history = spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{tmp_table}'").collect()
    assert "MERGE ON WRITE" in {h.operation for h in history}
    assert _state(spark, tmp_table).num_files < 12


# ---------------------------------------------------------------------------------------------
# Processes: writers racing a merge, and a merge killed with SIGKILL
# ---------------------------------------------------------------------------------------------

# A driver of its own (as tests/conftest.py builds one): warms up, prints READY, waits for the
# file `go`, then either appends `rounds` batches of rows with distinct ids (mode "append") or
# runs MERGE SPLITS (mode "merge"), printing DONE at the end.
PROCESS = r"""
import sys
import time
from pathlib import Path

import indextables

tests_dir, mode, path, first, per, rounds, work = sys.argv[1:]
sys.path.insert(0, tests_dir)
from helpers import session_builder
from test_merge_splits import _rows

builder = session_builder(
    f"indextables-merge-{mode}",
    {"spark.local.dir": work, "spark.driver.extraJavaOptions": f"-Djava.io.tmpdir={work}"},
)
spark = indextables.configure_spark(builder).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
_rows(spark, 0, 10).write.format("indextables").save(f"{work}/warm-up")
print("READY", flush=True)
go, deadline = Path(work) / "go", time.monotonic() + 600
while not go.exists():
    if time.monotonic() > deadline:
        sys.exit("nobody said go")
    time.sleep(0.01)
print("RUNNING", flush=True)
if mode == "append":
    for r in range(int(rounds)):
        start = int(first) + r * int(per)
        _rows(spark, start, int(per)).write.format("indextables").mode("append") \
            .partitionBy("hour").save(path)
        print(f"APPENDED {r}", flush=True)
else:
    spark.sql(f"MERGE SPLITS '{path}'").collect()
print("DONE", flush=True)
"""


class Driver:
    """One PROCESS in a session of its own (its own process group, killed together)."""

    def __init__(self, work: Path, mode: str, path: str, first: int, per: int, rounds: int):
        work.mkdir(parents=True)
        self.work = work
        script = work / "driver.py"
        script.write_text(PROCESS)
        self.out = work / "out.txt"
        args = [str(TESTS_DIR), mode, path, str(first), str(per), str(rounds), str(work)]
        with self.out.open("wb") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, str(script), *args],
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def said(self, word: str) -> bool:
        return word in self.out.read_text(errors="replace")

    def wait_for(self, word: str) -> None:
        deadline = time.monotonic() + PATIENCE_S
        while not self.said(word):
            if self.proc.poll() is not None and not self.said(word):
                raise AssertionError(f"the driver ended:\n{self.out.read_text(errors='replace')}")
            assert time.monotonic() < deadline, f"timed out waiting for {word}"
            time.sleep(0.05)

    def go(self) -> None:
        (self.work / "go").touch()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=PATIENCE_S)


@pytest.mark.line_neutral
def test_merge_racing_four_appending_writers_loses_no_row(
    spark: SparkSession, tmp_table: str, tmp_path: Path
) -> None:
    per, rounds = 200, 4
    write_table(_rows(spark, 0, per), tmp_table, partition_by=("hour",))
    writers = [
        Driver(tmp_path / f"w{i}", "append", tmp_table, (i + 1) * 100_000, per, rounds)
        for i in range(4)
    ]
    try:
        for w in writers:
            w.wait_for("READY")
        for w in writers:
            w.go()
        merges = []
        while any(w.proc.poll() is None for w in writers):
            if any(w.said("APPENDED") for w in writers):
                merges.append(_merge(spark, f"MERGE SPLITS '{tmp_table}'"))
            time.sleep(0.2)
        for w in writers:
            assert w.proc.returncode == 0 and w.said("DONE"), w.out.read_text()
    finally:
        for w in writers:
            w.kill()
    merges.append(_merge(spark, f"MERGE SPLITS '{tmp_table}'"))
    assert any(m.metrics.merge_groups > 0 for m in merges), merges
    assert all(m.metrics.failed_groups == 0 for m in merges), merges

    expected = {*range(per)} | {
        (i + 1) * 100_000 + k for i in range(4) for k in range(per * rounds)
    }
    ids = [r.id for r in read_table(spark, tmp_table).select("id").collect()]
    assert len(ids) == len(expected) and set(ids) == expected
    assert _state(spark, tmp_table).num_files == 3
    history = [
        h.operation for h in spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{tmp_table}'").collect()
    ]
    assert history.count("WRITE") == 16 and "MERGE SPLITS" in history


@pytest.mark.line_neutral
def test_kill_9_mid_merge_leaves_the_last_version_and_a_second_run_finishes(
    spark: SparkSession, tmp_table: str, tmp_path: Path, parquet: Callable[[DataFrame], DataFrame]
) -> None:
    oracle = parquet(_appended_table(spark, tmp_table, appends=12, per=2000))
    before = _state(spark, tmp_table)
    live = set(split_files(tmp_table))
    merger = Driver(tmp_path / "merger", "merge", tmp_table, 0, 0, 0)
    try:
        merger.wait_for("READY")
        merger.go()
        merger.wait_for("RUNNING")
        # Kill once the first merged split is in the table, before its version is written.
        deadline = time.monotonic() + PATIENCE_S
        while not (set(split_files(tmp_table)) - live):
            assert merger.proc.poll() is None, merger.out.read_text()
            assert time.monotonic() < deadline, "no merged split appeared"
            time.sleep(0.005)
        merger.kill()
    finally:
        merger.kill()
    assert not merger.said("DONE")
    after_kill = _state(spark, tmp_table)
    if after_kill.version == before.version:
        # The usual case: killed before its commit, the table reads its last version.
        assert after_kill.num_files == before.num_files
    assert_same_rows(read_table(spark, tmp_table), oracle)

    row = _merge(spark, f"MERGE SPLITS '{tmp_table}'")
    assert row.metrics.status in ("success", "no_action")
    assert _state(spark, tmp_table).num_files == 3
    assert_same_rows(read_table(spark, tmp_table), oracle)


def test_merge_on_s3(
    spark: SparkSession, s3: S3Server, parquet: Callable[[DataFrame], DataFrame]
) -> None:
    path = f"s3://{s3.new_bucket()}/merge-table"
    conf = s3.conf()
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        oracle = parquet(_appended_table(spark, path, appends=4, per=60))
        assert _state(spark, path).num_files == 12
        row = _merge(spark, f"MERGE SPLITS '{path}'")
        assert (row.metrics.status, row.metrics.merged_files, row.metrics.merge_groups) == (
            "success",
            12,
            3,
        )
        assert _state(spark, path).num_files == 3
        bucket, _, prefix = path.removeprefix("s3://").partition("/")
        keys = {
            o["Key"][len(prefix) + 1 :]
            for o in s3.client().list_objects_v2(Bucket=bucket, Prefix=prefix + "/")["Contents"]
        }
        assert {r.path for r in _live(spark, path)} <= keys
        assert_same_rows(read_table(spark, path), oracle)
        assert_same_rows(read_table(spark, path).where("id < 100"), oracle.where("id < 100"))
    finally:
        for key in conf:
            spark.conf.unset(key)
