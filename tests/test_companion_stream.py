"""BUILD INDEXTABLES COMPANION ... WITH STREAMING POLL INTERVAL, and IndexTable.stream_companion.

A stream keeps a companion index in sync with a real Delta table (made and appended to by
delta-spark) while the test changes the table, and every answer read through the index is then
compared with Delta's own. An idle stream commits nothing; a second stream over one index is
refused; a stream stops when asked, with a row for each sync that committed; a bad first sync
ends it at once with the command's error.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from pyspark.sql import Row, SparkSession

import delta_oracle
from indextables import IndexTable
from indextables.exceptions import IndexTablesError
from test_companion_delta import (
    assert_answers_match,
    build,
    create_delta,
    delta_version,
    error_of,
    make_rows,
)

pytestmark = pytest.mark.skipif(
    not delta_oracle.is_installed(), reason="build/package.sh puts Delta Lake's JARs in place"
)


def synced_version(spark: SparkSession, index: Path) -> int | None:
    """The source version the index last synced to; None before its first commit."""
    try:
        (state,) = IndexTable.for_path(spark, str(index)).describe().collect()
    except IndexTablesError as e:
        if e.error_class == "INDEXTABLES_TABLE_NOT_FOUND":
            return None
        raise
    version = state["source_version"]
    return None if version is None else int(version)


def wait_until(what: str, done: object, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.2)


def log_versions(index: Path) -> list[Path]:
    return sorted((index / "_transaction_log").glob("*.json"))


def test_a_stream_follows_its_delta_source_until_stopped(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 300, seed=21, first_id=0))
    build(spark, source, index)
    table = IndexTable.for_path(spark, str(index))

    with table.stream_companion(1) as stream:
        for n in range(3):
            delta.append(make_rows(spark, 100, seed=22 + n, first_id=300 + 100 * n))
            version = delta_version(spark, source)
            wait_until(
                f"the index reflects version {version}",
                lambda v=version: synced_version(spark, index) == v,
            )
        delta.sql("DELETE FROM {table} WHERE id % 4 = 0")
        version = delta_version(spark, source)
        wait_until("the delete is synced", lambda: synced_version(spark, index) == version)
        assert_answers_match(spark, index, delta)

        # Idle: several intervals pass and no version is written.
        before = log_versions(index)
        time.sleep(3.5)
        assert log_versions(index) == before
        assert stream.await_termination(0) is False  # still running

        # One stream per index.
        e = error_of(
            spark,
            f"BUILD INDEXTABLES COMPANION FOR DELTA '{source}' AT LOCATION '{index}' "
            "WITH STREAMING POLL INTERVAL 1 SECONDS",
        )
        assert e.error_class == "INDEXTABLES_COMPANION_STREAM_ACTIVE", str(e)
        assert stream.await_termination(0) is False
    assert not stream.is_active
    assert stream.await_termination(0)
    # A row for each sync that committed: the three appends and the delete, in version order.
    assert [r.status for r in stream.results] == ["success"] * len(stream.results)
    assert len(stream.results) >= 4
    assert [r.version for r in stream.results] == sorted(r.version for r in stream.results)
    assert stream.results[-1].source_version == delta_version(spark, source)
    # The same source version is never synced twice.
    assert len({r.source_version for r in stream.results}) == len(stream.results)


def test_the_sql_form_blocks_its_thread_and_stops_when_asked(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 200, seed=31, first_id=0))
    rows: list[Row] = []

    def stream() -> None:
        rows.extend(
            spark.sql(
                f"BUILD INDEXTABLES COMPANION FOR DELTA '{source}' AT LOCATION '{index}' "
                "WITH STREAMING POLL INTERVAL 1 SECONDS"
            ).collect()
        )

    thread = threading.Thread(target=stream, daemon=True)
    thread.start()
    wait_until("the first build", lambda: synced_version(spark, index) == 1)
    delta.append(make_rows(spark, 50, seed=32, first_id=200))
    wait_until("the append is synced", lambda: synced_version(spark, index) == 2)

    def stop(location: str) -> bool:
        statement = f"STOP INDEXTABLES COMPANION STREAM AT LOCATION '{location}'"
        (row,) = spark.sql(statement).collect()
        assert row.table_path == location
        return bool(row.stopped)

    assert stop(str(index))
    thread.join(60)
    assert not thread.is_alive()
    assert [(r.status, r.source_version) for r in rows] == [("success", 1), ("success", 2)]
    assert not stop(str(index))
    assert_answers_match(spark, index, delta)


def test_a_bad_first_sync_ends_the_stream_with_its_error(
    spark: SparkSession, tmp_path: Path
) -> None:
    not_delta = tmp_path / "plain"
    not_delta.mkdir()
    (not_delta / "a.txt").write_text("not a table")
    index = tmp_path / "index"
    started = time.monotonic()
    e = error_of(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR DELTA '{not_delta}' AT LOCATION '{index}' "
        "WITH STREAMING POLL INTERVAL 1 MINUTES",
    )
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_NOT_A_TABLE", str(e)
    assert time.monotonic() - started < 30
    assert not (index / "_transaction_log").exists()


@pytest.mark.parametrize(
    ("clauses", "why"),
    [
        ("WITH STREAMING POLL INTERVAL 0 SECONDS", "from 1 second to 7 days"),
        ("WITH STREAMING POLL INTERVAL 20000 MINUTES", "from 1 second to 7 days"),
        ("WITH STREAMING POLL INTERVAL 5 SECONDS DRY RUN", "not with DRY RUN"),
        ("FROM VERSION 0 WITH STREAMING POLL INTERVAL 5 SECONDS", "not with FROM VERSION 0"),
    ],
)
def test_stream_clauses_are_checked_before_anything_runs(
    spark: SparkSession, tmp_path: Path, clauses: str, why: str
) -> None:
    e = error_of(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR DELTA '{tmp_path / 'none'}' AT LOCATION "
        f"'{tmp_path / 'index'}' {clauses}",
    )
    assert e.error_class == "INDEXTABLES_COMPANION_INVALID_OPTION", str(e)
    assert why in str(e), str(e)
    assert "WITH STREAMING POLL INTERVAL" in str(e)


def test_stream_companion_is_for_companion_indexes_and_takes_whole_seconds(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    create_delta(spark, source, make_rows(spark, 20, seed=41, first_id=0))
    build(spark, source, index)
    table = IndexTable.for_path(spark, str(index))
    for bad in (0, -3, 1.5, True):
        with pytest.raises(ValueError, match="poll_interval_seconds"):
            table.stream_companion(bad)  # type: ignore[arg-type]
    plain = tmp_path / "plain"
    spark.range(3).write.format("indextables").save(str(plain))
    with pytest.raises(ValueError, match="not a companion index"):
        IndexTable.for_path(spark, str(plain)).stream_companion(5)
    # A stream whose first sync fails hands its error to await_termination.
    (source / "_delta_log").rename(tmp_path / "moved")
    stream = table.stream_companion(5)
    with pytest.raises(IndexTablesError) as e:
        stream.await_termination(60)
    assert e.value.error_class == "INDEXTABLES_COMPANION_SOURCE_NOT_A_TABLE", str(e.value)
    assert stream.exception is e.value
    assert not stream.is_active


def test_cancelling_a_syncs_job_ends_the_stream_and_commits_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    """PySpark's Ctrl-C cancels every job: a stream whose sync's job is cancelled ends."""
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 100, seed=51, first_id=0))
    build(spark, source, index)
    stream = IndexTable.for_path(spark, str(index)).stream_companion(1)
    versions = log_versions(index)
    tracker = spark.sparkContext.statusTracker()
    # Many files make the sync's indexing job last seconds on two cores, so a poll sees it run.
    delta.append(make_rows(spark, 20000, seed=52, first_id=1000, files=24))
    deadline = time.monotonic() + 60
    while not tracker.getActiveJobsIds():
        assert log_versions(index) == versions, "the sync committed before its job was seen"
        assert stream.is_active, f"the stream ended first: {stream.exception}"
        assert time.monotonic() < deadline, "timed out waiting until the sync's job starts"
        time.sleep(0.01)
    spark.sparkContext.cancelAllJobs()
    assert stream.await_termination(60)
    assert stream.exception is None
    assert log_versions(index) == versions
    # The next sync indexes what the cancelled one did not.
    assert IndexTable.for_path(spark, str(index)).sync_companion().status == "success"
    assert_answers_match(spark, index, delta)
