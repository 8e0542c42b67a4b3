"""PURGE INDEXTABLE, purge-on-write, TRUNCATE INDEXTABLES TIME TRAVEL, REPAIR INDEXFILES, and the
rule that every path taken from the log stays inside the table root.

PURGE has Delta VACUUM's semantics: a file the current version does not reference goes once it
left the table longer ago than the retention (24 hours at least): its remove action's
deletionTimestamp, or its modification time for a file never committed. The tests make files
"old" by setting their modification times with os.utime (`_age`) and removes "old" by rewriting
their deletionTimestamp in the version files (`_age_removes`), and say so; the tests that turn the
retention check off say so too."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import assert_same_rows, error_text, jvm, read_table, split_files, write_table
from test_object_stores import Store, store  # noqa: F401 (the fixture, parametrized by store)

pytestmark = pytest.mark.usefixtures("layout")

TESTS_DIR = Path(__file__).resolve().parent
DAY_S = 24 * 3600
LOG = "_transaction_log"


def _rows(spark: SparkSession, first: int, n: int) -> DataFrame:
    return spark.range(first, first + n).select(
        F.col("id"),
        (F.col("id") % 3).cast("int").alias("part"),
        F.concat(F.lit("message "), F.col("id").cast("string")).alias("msg"),
    )


def _age(files: list[Path] | set[Path], hours: float) -> None:
    """Sets the modification time of `files` to `hours` ago (how the tests make files old)."""
    when = time.time() - hours * 3600
    for f in files:
        os.utime(f, (when, when))


def _purge(
    spark: SparkSession, target: str, clause: str = ""
) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    (row,) = spark.sql(f"PURGE INDEXTABLE {target} {clause}").collect()
    return row.metrics.asDict(), [(f.path, f.size) for f in row.files]


def _age_removes(spark: SparkSession, path: str, hours: float) -> None:
    """Sets every remove's deletionTimestamp in the version files of `path` to `hours` ago (how
    the tests make a removal old), writing them back as plain JSON lines, and drops the JVM's
    cached snapshots, which hold the tombstones as they were."""
    when = int((time.time() - hours * 3600) * 1000)
    for version in _version_files(path):
        actions = _decode_version(Path(path) / LOG / f"{version:020d}.json")
        if any("remove" in a for a in actions):
            for a in actions:
                if "remove" in a:
                    a["remove"]["deletionTimestamp"] = when
            _append_version(path, version, actions)
    jvm(spark).io.indextables.spark.transaction.TransactionLog.clearCache()


def _no_check(spark: SparkSession, target: str, clause: str) -> tuple[dict[str, Any], list[Any]]:
    """PURGE with the retention check off (for this one command)."""
    spark.conf.set("spark.indextables.purge.retentionCheckEnabled", "false")
    try:
        return _purge(spark, target, clause)
    finally:
        spark.conf.unset("spark.indextables.purge.retentionCheckEnabled")


def _version_files(path: str) -> list[int]:
    return sorted(
        int(p.name[:20])
        for p in (Path(path) / LOG).glob("*.json")
        if p.name[:20].isdigit() and len(p.name) == 25
    )


def _live(spark: SparkSession, path: str) -> set[Path]:
    """The live splits' files: each split, and on the companion layout its Parquet file."""
    rows = spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()
    return {f for r in rows for f in _with_rows(Path(path) / r.path)}


def _with_rows(split: Path) -> list[Path]:
    """A split and, on the companion layout, the Parquet file of its rows beside it."""
    parquet = split.with_suffix(".parquet")
    return [split, parquet] if parquet.exists() else [split]


def data_files(table_path: str) -> list[Path]:
    """The files PURGE may delete: splits, and a companion table's Parquet files."""
    return sorted({f for s in split_files(table_path) for f in _with_rows(s)})


def _append_version(path: str, version: int, actions: list[dict[str, Any]]) -> None:
    """Writes version `version` of the log by hand (plain JSON lines, as the protocol allows)."""
    text = "".join(json.dumps(a) + "\n" for a in actions)
    (Path(path) / LOG / f"{version:020d}.json").write_text(text)


def _add(path: str, size: int) -> dict[str, Any]:
    return {
        "add": {
            "path": path,
            "partitionValues": {},
            "size": size,
            "modificationTime": int(time.time() * 1000),
            "dataChange": True,
        }
    }


def _table(spark: SparkSession, path: str, appends: int, rows: int = 300) -> DataFrame:
    """`appends` appends of `rows` rows each, one split each; returns everything written."""
    total = None
    for i in range(appends):
        df = _rows(spark, i * rows, rows).coalesce(1)
        write_table(df, path, mode="append")
        total = df if total is None else total.unionByName(df)
    assert total is not None
    return total


# ---------------------------------------------------------------------------------------------
# Paths from the log stay inside the table
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dotdot", "absolute"])
def test_a_log_path_outside_the_table_fails_the_read_and_purge_deletes_nothing_outside(
    spark: SparkSession, tmp_path: Path, kind: str
) -> None:
    path = str(tmp_path / "table")
    _table(spark, path, 1)
    victim_dir = tmp_path / "outside"
    victim_dir.mkdir()
    victim = victim_dir / "precious.split"
    shutil.copy(split_files(path)[0], victim)
    _age([victim], 1000)
    logged = "../outside/precious.split" if kind == "dotdot" else str(victim)
    # A crafted version: the add names the outside file, and a later remove tombstones it.
    _append_version(path, 1, [_add(logged, victim.stat().st_size)])

    with pytest.raises(Exception) as read_error:
        read_table(spark, path).collect()
    text = error_text(read_error.value)
    assert "INDEXTABLES_PATH_OUTSIDE_TABLE" in text and logged in text and "add action" in text

    # REPAIR writes a log without it (the source is only read).
    repaired = tmp_path / "repaired_log"
    (row,) = spark.sql(
        f"REPAIR INDEXFILES TRANSACTION LOG '{path}/{LOG}' AT LOCATION '{repaired}'"
    ).collect()
    assert (row.total_splits, row.valid_splits, row.missing_splits) == (2, 1, 1)
    assert len(_decode_version(repaired / f"{1:020d}.json")) == 1

    _append_version(
        path, 2, [{"remove": {"path": logged, "deletionTimestamp": 1, "dataChange": True}}]
    )
    # The remove made the outside file "dead"; PURGE fails on the log and never touches it.
    with pytest.raises(Exception) as purge_error:
        _purge(spark, f"'{path}'", "OLDER THAN 1 DAYS")
    assert "INDEXTABLES_PATH_OUTSIDE_TABLE" in error_text(purge_error.value)
    assert victim.exists()

    assert victim.exists()


def test_a_log_path_outside_the_table_is_refused_by_a_purge_with_the_check_off(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Even with the retention check off and no retention at all, a file outside the table that
    only a crafted, already cleaned-up part of the log named is never listed, so never deleted."""
    path = str(tmp_path / "table")
    _table(spark, path, 2)
    outside = tmp_path / "sibling.split"
    shutil.copy(split_files(path)[0], outside)
    _age([outside, *split_files(path)], 1000)
    spark.conf.set("spark.indextables.purge.retentionCheckEnabled", "false")
    try:
        metrics, files = _purge(spark, f"'{path}'", "OLDER THAN 0 HOURS")
    finally:
        spark.conf.unset("spark.indextables.purge.retentionCheckEnabled")
    assert metrics["orphaned_files_deleted"] == 0 and files == []
    assert outside.exists()


# ---------------------------------------------------------------------------------------------
# PURGE INDEXTABLE
# ---------------------------------------------------------------------------------------------


def test_purge_dry_run_then_purge_deletes_only_unreachable_splits(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "table")
    first = _rows(spark, 0, 900)
    write_table(first, path, partition_by=("part",))  # v0: 3 splits
    v0_splits = set(data_files(path))
    second = _rows(spark, 10_000, 600)
    write_table(second, path, mode="overwrite", partition_by=("part",))  # v1 replaces them
    live = _live(spark, path)
    assert live.isdisjoint(v0_splits) and live and v0_splits
    # A split a failed write left behind (uploaded, never committed).
    orphan = Path(path) / "part=0" / "part-00000000-dead-beef-0000-000000000000.split"
    shutil.copy(sorted(v0_splits)[0], orphan)
    parquet = str(tmp_path / "oracle.parquet")
    second.write.parquet(parquet)
    spark.sql(f"CHECKPOINT INDEXTABLES '{path}'")
    _age(set(data_files(path)), 48)  # every split 48 hours old (os.utime)

    # Version 1 removed v0's splits just now: however old the files, their removal is recent,
    # so a PURGE keeps them (as Delta's VACUUM does) and deletes the orphan only.
    metrics, files = _purge(spark, f"'{path}'", "OLDER THAN 1 DAYS DRY RUN")
    assert metrics["status"] == "DRY_RUN" and metrics["dry_run"] is True
    assert files == [(str(orphan.relative_to(path)), orphan.stat().st_size)]
    assert orphan.exists()

    # The removal made 48 hours old (rewritten deletionTimestamps): v0's splits are due now,
    # and with the log retention at 0 hours version 0 goes too (the checkpoint covers it).
    # Dry run first: nothing changes.
    _age_removes(spark, path, 48)
    clause = "OLDER THAN 3 DAYS TRANSACTION LOG RETENTION 0 HOURS"
    metrics, files = _purge(
        spark, f"'{path}'", "OLDER THAN 1 DAYS TRANSACTION LOG RETENTION 0 HOURS DRY RUN"
    )
    expected = {(str(p.relative_to(path)), p.stat().st_size) for p in v0_splits | {orphan}}
    assert set(files) == expected and metrics["tx_log_files_deleted"] == 1
    assert metrics["size_mb_deleted"] == pytest.approx(sum(s for _, s in expected) / 2**20)
    assert all(p.exists() for p in v0_splits | {orphan}) and _version_files(path) == [0, 1]

    # Retention 3 days: the files are 48 hours old, so they stay (the old version file goes).
    metrics, files = _purge(spark, f"'{path}'", clause)
    assert files == [] and metrics["orphaned_files_found"] == len(v0_splits) + 1
    metrics, files = _purge(
        spark, f"'{path}'", "OLDER THAN 1 DAYS TRANSACTION LOG RETENTION 0 HOURS"
    )
    assert metrics["status"] == "SUCCESS" and set(files) == expected
    assert not any(p.exists() for p in v0_splits | {orphan})
    assert all(p.exists() for p in live) and set(data_files(path)) == live
    assert _version_files(path) == [1]
    assert_same_rows(read_table(spark, path), spark.read.parquet(parquet))
    # Time travel to the versions still reachable keeps working; version 0 is gone.
    v1 = spark.read.format("indextables").option("versionAsOf", 1).load(path)
    assert_same_rows(v1, spark.read.parquet(parquet))
    with pytest.raises(Exception) as gone:
        spark.read.format("indextables").option("versionAsOf", 0).load(path).collect()
    assert "INDEXTABLES_VERSION_REMOVED" in error_text(gone.value)
    # A second run finds nothing.
    metrics, files = _purge(
        spark, f"'{path}'", "OLDER THAN 1 DAYS TRANSACTION LOG RETENTION 0 HOURS"
    )
    assert files == [] and metrics["orphaned_files_found"] == 0


def test_purge_frees_the_space_of_overwritten_data(spark: SparkSession, tmp_path: Path) -> None:
    """Issue 28 item 1, its repro: 500 rows written, then overwritten three times. Every file the
    current version does not reference goes (VACUUM semantics), however many version files still
    name them, and on the companion layout the Parquet files of their rows go with them."""
    path = str(tmp_path / "table")
    write_table(_rows(spark, 0, 500).repartition(2), path)
    for i in range(1, 4):
        last = _rows(spark, i * 1000, 500).repartition(2)
        write_table(last, path, mode="overwrite")
    live = _live(spark, path)
    every = set(data_files(path))
    live_splits = [p for p in live if p.suffix == ".split"]
    assert len(split_files(path)) == 8 and len(live_splits) == 2
    assert live < every and _version_files(path) == [0, 1, 2, 3]
    parquet = str(tmp_path / "oracle.parquet")
    last.write.parquet(parquet)

    metrics, files = _no_check(spark, f"'{path}'", "OLDER THAN 0 HOURS")
    dead = every - live
    assert metrics["status"] == "SUCCESS" and metrics["orphaned_files_deleted"] == len(dead)
    assert {p for p, _ in files} == {str(p.relative_to(path)) for p in dead}
    assert set(data_files(path)) == live and len(split_files(path)) == 2
    assert_same_rows(read_table(spark, path), spark.read.parquet(parquet))
    # No checkpoint covered the old versions, so the version files stayed (log retention).
    assert _version_files(path) == [0, 1, 2, 3]


def test_purge_writes_a_checkpoint_so_log_cleanup_can_rest_on_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    """With no checkpoint, TRANSACTION LOG RETENTION had nothing to rest on and removed nothing:
    PURGE writes one of the current version first, then the version files older than both the
    log retention and that checkpoint go. A dry run writes nothing."""
    path = str(tmp_path / "table")
    rows = _table(spark, path, 4)
    clause = "OLDER THAN 0 HOURS TRANSACTION LOG RETENTION 0 HOURS"
    metrics, _ = _no_check(spark, f"'{path}'", clause + " DRY RUN")
    assert metrics["tx_log_files_deleted"] == 3 and _version_files(path) == [0, 1, 2, 3]
    assert not (Path(path) / LOG / "_last_checkpoint").exists()
    metrics, files = _no_check(spark, f"'{path}'", clause)
    assert metrics["tx_log_files_deleted"] == 3 and files == []
    assert _version_files(path) == [3] and (Path(path) / LOG / "_last_checkpoint").exists()
    jvm(spark).io.indextables.spark.transaction.TransactionLog.clearCache()
    assert_same_rows(read_table(spark, path), rows)
    v3 = spark.read.format("indextables").option("versionAsOf", 3).load(path)
    assert_same_rows(v3, rows)


def test_purge_keeps_files_removed_recently_however_old(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A file's removal time is its remove's deletionTimestamp, not its modification time: an
    overwrite just now of files written 48 hours ago keeps them through a 24-hour PURGE, and the
    version before the overwrite still reads. Once the removal is 48 hours old, they go."""
    path = str(tmp_path / "table")
    first = _rows(spark, 0, 300).coalesce(1)
    write_table(first, path)
    old = set(data_files(path))
    _age(old, 48)
    write_table(_rows(spark, 1_000, 300).coalesce(1), path, mode="overwrite")
    metrics, files = _purge(spark, f"'{path}'", "OLDER THAN 1 DAYS")
    assert files == [] and metrics["orphaned_files_found"] == len(old)
    assert all(p.exists() for p in old)
    v0 = spark.read.format("indextables").option("versionAsOf", 0).load(path)
    assert_same_rows(v0, first)
    _age_removes(spark, path, 48)
    metrics, files = _purge(spark, f"'{path}'", "OLDER THAN 1 DAYS")
    assert {p for p, _ in files} == {str(p.relative_to(path)) for p in old}
    assert not any(p.exists() for p in old)


def test_time_travel_after_purge_fails_clearly_or_answers_right(
    spark: SparkSession, tmp_path: Path
) -> None:
    """After a PURGE, a version whose files it deleted fails with INDEXTABLES_SPLIT_PURGED naming
    the file, for a search, a plain scan and a pushed aggregate alike, never with fewer rows;
    versions whose files were kept read as they did."""
    path = str(tmp_path / "table")
    write_table(_rows(spark, 0, 400).coalesce(1), path)  # v0
    (v0_split,) = split_files(path)
    second = _rows(spark, 10_000, 400).coalesce(1)
    write_table(second, path, mode="overwrite")  # v1
    _no_check(spark, f"'{path}'", "OLDER THAN 0 HOURS")
    assert not v0_split.exists()
    third = _rows(spark, 20_000, 100).coalesce(1)
    write_table(third, path, mode="append")  # v2: v1's split is still live

    def at(version: int) -> DataFrame:
        return spark.read.format("indextables").option("versionAsOf", version).load(path)

    queries: list[Callable[[DataFrame], Any]] = [
        lambda df: df.collect(),
        lambda df: df.filter("id > 5").collect(),
        lambda df: df.filter("id > 5").agg(F.max("id")).collect(),
        lambda df: df.groupBy("part").count().collect(),
    ]
    for query in queries:
        with pytest.raises(Exception) as gone:
            query(at(0))
        text = error_text(gone.value)
        assert "INDEXTABLES_SPLIT_PURGED" in text and v0_split.name in text, text
        assert "PURGE" in text and "Version 0" in text
    assert_same_rows(at(1), second)
    assert_same_rows(at(1).filter("id % 7 = 1"), second.filter("id % 7 = 1"))
    assert_same_rows(at(2), second.unionByName(third))
    assert_same_rows(read_table(spark, path), second.unionByName(third))


def test_purge_keeps_splits_only_a_checkpoint_references(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Upstream's PR #67: a purge that read version files only, not checkpoints, deleted live
    splits once the version files that added them were cleaned up. Here every split is old,
    the versions that added them are deleted by the first run, and two more runs follow."""
    path = str(tmp_path / "table")
    everything = _table(spark, path, 5)
    spark.sql(f"CHECKPOINT INDEXTABLES '{path}'")  # state at version 4
    _table_more = _rows(spark, 50_000, 300).coalesce(1)
    write_table(_table_more, path, mode="append")  # version 5, after the checkpoint
    everything = everything.unionByName(_table_more)
    live = _live(spark, path)
    assert len([p for p in live if p.suffix == ".split"]) == 6
    _age(set(split_files(path)), 100)
    for _ in range(3):
        metrics, files = _purge(
            spark, f"'{path}'", "OLDER THAN 1 DAYS TRANSACTION LOG RETENTION 0 HOURS"
        )
        assert files == [] and metrics["orphaned_files_found"] == 0
    assert _version_files(path) == [4, 5]
    assert all(p.exists() for p in live)
    assert_same_rows(read_table(spark, path), everything)
    v4 = spark.read.format("indextables").option("versionAsOf", 4).load(path)
    assert v4.count() == 1500


def test_purge_keeps_a_split_uploaded_but_not_yet_committed(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A write in flight has uploaded its split and not yet committed it: the split is
    unreferenced, but recent, so PURGE (24 hours at least) leaves it; its commit then lands and
    the rows read."""
    path = str(tmp_path / "table")
    before = _table(spark, path, 1)
    staging = str(tmp_path / "staging")
    extra = _rows(spark, 7_000, 250).coalesce(1)
    write_table(extra, staging)
    (staged,) = split_files(staging)
    uploaded = Path(path) / "part-11111111-2222-3333-4444-555555555555.split"
    # The upload (fresh modification times): the split, and on the companion layout first the
    # Parquet file its manifest names.
    uploads = [uploaded]
    if staged.with_suffix(".parquet").exists():
        uploads.append(Path(path) / staged.with_suffix(".parquet").name)
        shutil.copy(staged.with_suffix(".parquet"), uploads[-1])
    shutil.copy(staged, uploaded)
    _age([p for p in data_files(path) if p not in uploads], 100)

    metrics, files = _purge(spark, f"'{path}'", "OLDER THAN 24 HOURS")
    assert metrics["orphaned_files_found"] == len(uploads) and files == []
    assert all(u.exists() for u in uploads)

    # The commit: the writer adds the split it uploaded, with its footer offsets, as version 1.
    (add_line,) = [
        line
        for line in _decode_version(Path(staging) / LOG / f"{1 - 1:020d}.json")
        if "add" in line
    ]
    add_line["add"]["path"] = uploaded.name
    _append_version(path, 1, [add_line])
    assert_same_rows(read_table(spark, path), before.unionByName(extra))


def _decode_version(file: Path) -> list[dict[str, Any]]:
    import gzip

    data = file.read_bytes()
    if data[:2] == b"\x01\x01":
        data = gzip.decompress(data[2:])
    elif data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return [json.loads(line) for line in data.decode().splitlines() if line.strip()]


def test_purge_retention_below_the_minimum_is_an_error(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "table")
    _table(spark, path, 1)
    with pytest.raises(Exception) as e:
        _purge(spark, f"'{path}'", "OLDER THAN 23 HOURS")
    text = error_text(e.value)
    assert "INDEXTABLES_PURGE_RETENTION_TOO_SHORT" in text and "23 hours" in text
    assert "spark.indextables.purge.retentionCheckEnabled" in text
    with pytest.raises(Exception) as syntax:
        spark.sql(f"PURGE INDEXTABLE '{path}' OLDER THAN 3 WEEKS").collect()
    assert "INDEXTABLES_COMMAND_SYNTAX_ERROR" in error_text(syntax.value)
    with pytest.raises(Exception) as missing:
        _purge(spark, f"'{tmp_path / 'nothing'}'")
    assert "INDEXTABLES_TABLE_NOT_FOUND" in error_text(missing.value)


def test_retention_check_off_allows_a_short_retention(spark: SparkSession, tmp_path: Path) -> None:
    """The retention check turned off (this test only): OLDER THAN 0 HOURS deletes an orphan at
    once. The keyword forms INDEXTABLES and TANTIVY4SPARK are accepted for INDEXTABLE."""
    path = str(tmp_path / "table")
    rows = _table(spark, path, 2)
    orphan = Path(path) / "part-orphan.split"
    shutil.copy(split_files(path)[0], orphan)
    _age([orphan], 0.01)
    spark.conf.set("spark.indextables.purge.retentionCheckEnabled", "false")
    try:
        (row,) = spark.sql(f"purge tantivy4spark '{path}' older than 0 hours").collect()
    finally:
        spark.conf.unset("spark.indextables.purge.retentionCheckEnabled")
    assert [f.path for f in row.files] == ["part-orphan.split"] and not orphan.exists()
    assert_same_rows(read_table(spark, path), rows)


def test_purge_on_write(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "table")
    write_table(_rows(spark, 0, 300).coalesce(1), path)
    dead = set(split_files(path))
    kept = _rows(spark, 1_000, 300).coalesce(1)
    write_table(kept, path, mode="overwrite")
    spark.sql(f"CHECKPOINT INDEXTABLES '{path}'")
    _age(dead, 48)
    _age_removes(spark, path, 48)  # the overwrite removed them 48 hours ago
    options = {
        "spark.indextables.purgeOnWrite.enabled": "true",
        "spark.indextables.purgeOnWrite.triggerAfterWrites": "2",
        "spark.indextables.purgeOnWrite.splitRetentionHours": "24",
        "spark.indextables.purgeOnWrite.txLogRetentionHours": "0",
    }
    a = _rows(spark, 2_000, 100).coalesce(1)
    write_table(a, path, mode="append", options=options)  # write 1 of 2: no purge
    assert all(p.exists() for p in dead) and _version_files(path)[0] == 0
    b = _rows(spark, 3_000, 100).coalesce(1)
    write_table(b, path, mode="append", options=options)  # write 2: purge after the commit
    assert not any(p.exists() for p in dead)
    assert 0 not in _version_files(path)
    assert_same_rows(read_table(spark, path), kept.unionByName(a).unionByName(b))

    with pytest.raises(Exception) as e:
        write_table(
            b,
            path,
            mode="append",
            options={**options, "spark.indextables.purgeOnWrite.splitRetentionHours": "2"},
        )
    assert "INDEXTABLES_PURGE_RETENTION_TOO_SHORT" in error_text(e.value)
    assert read_table(spark, path).count() == 500


# ---------------------------------------------------------------------------------------------
# PURGE racing a writer, and PURGE killed
# ---------------------------------------------------------------------------------------------

APPENDER = r"""
import sys
import indextables
tests_dir, path, rounds = sys.argv[1:]
sys.path.insert(0, tests_dir)
from helpers import session_builder
spark = indextables.configure_spark(session_builder("purge-race-writer")).getOrCreate()
for i in range(int(rounds)):
    df = spark.range(100_000 + i * 100, 100_000 + i * 100 + 100).selectExpr(
        "id", "cast(id % 3 as int) as part", "concat('message ', cast(id as string)) as msg")
    df.coalesce(1).write.format("indextables").mode("append").save(path)
    print("APPENDED", i, flush=True)
print("DONE", flush=True)
"""


def test_purge_racing_a_writer_deletes_no_live_file(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "table")
    base = _table(spark, path, 2)
    dead = set()
    for i in range(30):  # splits failed writes left behind, 48 hours old (os.utime)
        p = Path(path) / f"part-dead-{i:04d}.split"
        shutil.copy(split_files(path)[0], p)
        dead.add(p)
    _age(dead | set(data_files(path)), 48)
    script = tmp_path / "appender.py"
    script.write_text(APPENDER)
    out = tmp_path / "appender.txt"
    rounds = 12
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(TESTS_DIR), path, str(rounds)],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        purges = 0
        deadline = time.monotonic() + 600
        while proc.poll() is None and time.monotonic() < deadline:
            if "APPENDED" in out.read_text(errors="replace"):
                _purge(spark, f"'{path}'", "OLDER THAN 1 DAYS")
                purges += 1
            time.sleep(0.2)
        assert proc.wait(timeout=60) == 0, out.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert purges >= 1, out.read_text()
    assert not any(p.exists() for p in dead)
    live = _live(spark, path)
    assert len([p for p in live if p.suffix == ".split"]) == 2 + rounds
    assert all(p.exists() for p in live)
    appended = spark.range(100_000, 100_000 + rounds * 100).selectExpr(
        "id", "cast(id % 3 as int) as part", "concat('message ', cast(id as string)) as msg"
    )
    assert_same_rows(read_table(spark, path), base.unionByName(appended))


PURGER = r"""
import sys
import indextables
tests_dir, path = sys.argv[1:]
sys.path.insert(0, tests_dir)
from helpers import session_builder
spark = indextables.configure_spark(session_builder("purge-killed")).getOrCreate()
spark.range(1).count()
print("PURGING", flush=True)
spark.sql(f"PURGE INDEXTABLE '{path}' OLDER THAN 1 DAYS").collect()
print("DONE", flush=True)
"""


def test_kill_9_mid_purge_then_a_second_run_finishes(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "table")
    rows = _table(spark, path, 2)
    live = _live(spark, path)
    dead_dir = Path(path) / "junk"
    dead_dir.mkdir()
    payload = b"not a real split"
    dead = []
    for i in range(20_000):  # unreferenced split files (their content is never read)
        p = dead_dir / f"part-{i:06d}.split"
        p.write_bytes(payload)
        dead.append(p)
    _age(dead + sorted(live), 48)
    script = tmp_path / "purger.py"
    script.write_text(PURGER)
    out = tmp_path / "purger.txt"
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(TESTS_DIR), path],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 300
        while "PURGING" not in out.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
        while sum(1 for _ in dead_dir.iterdir()) == len(dead):
            assert proc.poll() is None, out.read_text()
            time.sleep(0.002)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    left = sum(1 for _ in dead_dir.iterdir())
    assert "DONE" not in out.read_text() and 0 < left < len(dead), left
    assert all(p.exists() for p in live)
    assert_same_rows(read_table(spark, path), rows)
    metrics, files = _purge(spark, f"'{path}'", "OLDER THAN 1 DAYS")
    assert metrics["status"] == "SUCCESS" and len(files) == left
    assert not any(dead_dir.iterdir()) and all(p.exists() for p in live)
    assert_same_rows(read_table(spark, path), rows)


# ---------------------------------------------------------------------------------------------
# TRUNCATE INDEXTABLES TIME TRAVEL
# ---------------------------------------------------------------------------------------------


def test_truncate_time_travel(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "table")
    rows = _table(spark, path, 4)
    splits = set(split_files(path))
    (dry,) = spark.sql(f"TRUNCATE INDEXTABLES TIME TRAVEL '{path}' DRY RUN").collect()
    assert (dry.status, dry.checkpoint_version, dry.versions_deleted) == ("DRY_RUN", 3, 3)
    assert _version_files(path) == [0, 1, 2, 3]
    (row,) = spark.sql(f"truncate tantivy4spark time travel '{path}'").collect()
    assert (row.status, row.checkpoint_version, row.versions_deleted) == ("SUCCESS", 3, 3)
    assert row.files_preserved == 4
    assert _version_files(path) == [3] and set(split_files(path)) == splits
    assert_same_rows(read_table(spark, path), rows)
    v3 = spark.read.format("indextables").option("versionAsOf", 3).load(path)
    assert_same_rows(v3, rows)
    with pytest.raises(Exception) as e:
        spark.read.format("indextables").option("versionAsOf", 1).load(path).collect()
    assert "INDEXTABLES_VERSION_REMOVED" in error_text(e.value)
    # Appends go on from there, and a second truncate drops the versions before the newest.
    more = _rows(spark, 90_000, 50).coalesce(1)
    write_table(more, path, mode="append")
    (again,) = spark.sql(f"TRUNCATE INDEXTABLES TIME TRAVEL '{path}'").collect()
    assert (again.checkpoint_version, again.versions_deleted) == (4, 1)
    assert_same_rows(read_table(spark, path), rows.unionByName(more))


# ---------------------------------------------------------------------------------------------
# REPAIR INDEXFILES TRANSACTION LOG
# ---------------------------------------------------------------------------------------------


def test_repair_keeps_only_the_splits_that_exist(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "table")
    parts = []
    for i in range(3):
        df = _rows(spark, i * 1000, 200).coalesce(1)
        before = set(split_files(path)) if Path(path).exists() else set()
        write_table(df, path, mode="append")
        (new,) = set(split_files(path)) - before
        parts.append((df, new))
    parts[1][1].unlink()  # the second append's split is lost
    with pytest.raises(Exception) as broken:
        # A search (a companion table's plain scan reads only its Parquet files).
        read_table(spark, path).filter("id >= 0").collect()
    assert "INDEXTABLES_SPLIT_MISSING" in error_text(broken.value)

    target = Path(path) / "_transaction_log_repaired"
    (row,) = spark.sql(
        f"REPAIR INDEXFILES TRANSACTION LOG '{path}/{LOG}' AT LOCATION '{target}'"
    ).collect()
    assert (row.source_version, row.total_splits, row.valid_splits, row.missing_splits) == (
        2,
        3,
        2,
        1,
    )
    assert row.status == "SUCCESS" and sorted(p.name for p in target.glob("*.json")) == [
        f"{0:020d}.json",
        f"{1:020d}.json",
    ]
    with pytest.raises(Exception) as again:
        spark.sql(f"REPAIR INDEXFILES TRANSACTION LOG '{path}' AT LOCATION '{target}'").collect()
    assert "INDEXTABLES_INVALID_REPAIR" in error_text(again.value)
    assert str(target) in error_text(again.value)

    shutil.move(str(Path(path) / LOG), str(tmp_path / "old_log"))
    shutil.move(str(target), str(Path(path) / LOG))
    jvm(spark).io.indextables.spark.transaction.TransactionLog.clearCache()
    assert_same_rows(read_table(spark, path), parts[0][0].unionByName(parts[2][0]))


# ---------------------------------------------------------------------------------------------
# On S3 and Azure
# ---------------------------------------------------------------------------------------------


def test_purge_and_drop_partitions_on_object_stores(
    spark: SparkSession,
    store: Store,  # noqa: F811 (the fixture imported above)
) -> None:
    """Object stores set modification times themselves, so this test turns the retention check
    off and purges with OLDER THAN 0 HOURS (no write runs meanwhile): the listing and deleting
    go through the store's LogStore, as they do at 24 hours on a real table."""
    url = store.new_table("purged")
    first = _rows(spark, 0, 600)
    first.write.format("indextables").partitionBy("part").save(url)
    dead = {k for k in store.keys(url) if k.endswith((".split", ".parquet"))}
    second = _rows(spark, 5_000, 600)
    second.write.format("indextables").mode("overwrite").partitionBy("part").save(url)
    spark.sql(f"CHECKPOINT INDEXTABLES '{url}'").collect()
    live = {k for k in store.keys(url) if k.endswith((".split", ".parquet"))} - dead
    spark.conf.set("spark.indextables.purge.retentionCheckEnabled", "false")
    try:
        clause = "OLDER THAN 0 HOURS TRANSACTION LOG RETENTION 0 HOURS"
        metrics, files = _purge(spark, f"'{url}'", clause + " DRY RUN")
        assert {p for p, _ in files} == dead and metrics["tx_log_files_deleted"] == 1
        assert dead <= set(store.keys(url))
        metrics, files = _purge(spark, f"'{url}'", clause)
    finally:
        spark.conf.unset("spark.indextables.purge.retentionCheckEnabled")
    assert metrics["status"] == "SUCCESS" and {p for p, _ in files} == dead
    splits = {k for k in store.keys(url) if k.endswith((".split", ".parquet"))}
    assert splits == live and f"{LOG}/{0:020d}.json" not in store.keys(url)
    assert_same_rows(spark.read.format("indextables").load(url), second)

    (row,) = spark.sql(f"DROP INDEXTABLES PARTITIONS FROM '{url}' WHERE part > 1").collect()
    assert row.partitions_dropped == 1
    assert_same_rows(spark.read.format("indextables").load(url), second.filter("part <= 1"))
