"""Overwrites that do not finish, or that lose a race: the table keeps a version it can read.

A replaceWhere killed with SIGKILL in the middle of its write (its own driver process, the JVM
with it) leaves split files in the table directory that no log version references; the table
still reads exactly its previous version, its history shows no new version, and the next write
succeeds. Of two overwrites whose replaced splits overlap, the one that commits second fails
with INDEXTABLES_CONCURRENT_COMMIT, commits nothing and removes what it wrote; two overwrites of
different partitions both commit. Every write is a user's write, with real Spark sessions.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, DataFrameWriter, Row, SparkSession
from pyspark.sql import functions as F

from helpers import (
    MAX_ROWS_PER_SPLIT,
    TEXT,
    TYPEMAP,
    assert_same_rows,
    error_text,
    read_table,
    split_files,
    write_table,
)
from indextables import ConcurrentCommitError
from killed_driver import PATIENCE_S, KilledDriver, wait_until

pytestmark = pytest.mark.usefixtures("layout")

FIRST_DAY = dt.date(2024, 1, 1)
LEVELS = ("INFO", "WARN", "ERROR", "DEBUG")
OPTIONS = {TYPEMAP + "message": TEXT}


def log_rows(
    spark: SparkSession,
    first: int,
    n: int,
    days: int,
    first_day: int = 0,
    level: str | None = None,
    partitions: int = 2,
) -> DataFrame:
    """n deterministic log rows with ids first.., spread over `days` days from FIRST_DAY +
    first_day, levels cycling over LEVELS (or all `level`), in `partitions` partitions.

    The killed writer's process builds its rows with this function too."""
    ids = spark.range(first, first + n, numPartitions=partitions)
    day = F.date_add(F.lit(FIRST_DAY), (F.col("id") % days + first_day).cast("int"))
    # Within a day, ids step by `days`: the level follows id // days, so every day has all four.
    nth = (F.floor(F.col("id") / days) % len(LEVELS) + 1).cast("int")
    cycled = F.element_at(F.array(*[F.lit(v) for v in LEVELS]), nth)
    id_text = F.col("id").cast("string")
    outcome = F.when(F.col("id") % 7 == 0, F.lit(" timed out")).otherwise(F.lit(" served"))
    return ids.select(
        F.col("id"),
        day.alias("day"),
        (cycled if level is None else F.lit(level)).alias("level"),
        F.concat(F.lit("request "), id_text, F.lit(" for block blk_"), id_text, outcome).alias(
            "message"
        ),
    )


def _day(n: int) -> dt.date:
    return FIRST_DAY + dt.timedelta(days=n)


def _history(spark: SparkSession, path: str) -> list[Row]:
    return spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{path}'").collect()


def _live_splits(spark: SparkSession, path: str) -> set[Path]:
    rows = spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()
    return {Path(path) / r.path for r in rows}


def _unreferenced(spark: SparkSession, path: str) -> set[Path]:
    """The split files in the table directory that the latest log version does not reference."""
    return set(split_files(path)) - _live_splits(spark, path)


def _totals_by_day(df: DataFrame) -> list[Row]:
    """Rows and the sum of their ids, day by day: a cheap fingerprint of a table's rows."""
    totals = df.groupBy("day").agg(F.count("*").alias("rows"), F.sum("id").alias("ids"))
    return totals.orderBy("day").collect()


# ---------------------------------------------------------------------------------------------
# A replaceWhere killed with SIGKILL
# ---------------------------------------------------------------------------------------------

# The killed writer's body: a replaceWhere of log_rows(first, n, 1, first_day, level).
KILLED_WRITE = r"""
from test_overwrite_failures import OPTIONS, log_rows

path, predicate, first, n, first_day, level, per_split = args
rows = log_rows(spark, int(first), int(n), 1, int(first_day), level or None)
(
    rows.write.format("indextables")
    .mode("overwrite")
    .options(**OPTIONS)
    .option("spark.indextables.maxRowsPerSplit", per_split)
    .option("replaceWhere", predicate)
    .save(path)
)
"""


class KilledWriter:
    """A replaceWhere of log_rows(first, n, 1, first_day, level) on `path`, in a driver process
    of its own (a [[KilledDriver]]), started at once so that its start-up overlaps the test's
    work; `write_until` runs it and SIGKILLs it mid-write."""

    def __init__(
        self,
        path: str,
        work: Path,
        predicate: str,
        rows: tuple[int, int, int, str],
        per_split: int,
    ) -> None:
        self.path = path
        first, n, first_day, level = rows
        args = [path, predicate, str(first), str(n), str(first_day), level, str(per_split)]
        self.driver = KilledDriver(work, KILLED_WRITE, args)

    def write_until(self, moment: Callable[[set[Path]], bool]) -> set[Path]:
        """Lets the write go, SIGKILLs the writer's process group once `moment(split files that
        appeared in the table since)` holds, and returns those files once the writer is dead."""
        before = set(split_files(self.path))
        self.driver.run_until(
            lambda: moment(set(split_files(self.path)) - before), "the moment to kill the writer"
        )
        return set(split_files(self.path)) - before

    def kill(self) -> None:
        self.driver.kill()


def test_kill_9_during_replace_where_leaves_the_previous_version_readable(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "table")
    day1 = f"day = DATE'{_day(0)}'"
    errors_of_day2 = f"day = DATE'{_day(1)}' AND level = 'ERROR'"
    # Both writers start now; each runs its write when told to.
    writers = [
        # 400,000 rows for day 1: two tasks, 40 splits of 10,000 rows, moved into the table one
        # by one as they are written.
        KilledWriter(path, tmp_path / "w1", day1, (1_000_000, 400_000, 0, ""), 10_000),
        # 20,000 ERROR rows for day 2: two tasks, 8 splits of 2,500 rows. Then, since its
        # predicate cuts through day 2's splits, a second job rewrites their other rows into
        # new splits (of 2,500 rows too) before the commit.
        KilledWriter(path, tmp_path / "w2", errors_of_day2, (2_000_000, 20_000, 1, "ERROR"), 2_500),
    ]
    try:
        # 200,000 rows over four days: 16 splits (two tasks, 25,000 rows a day each).
        table = log_rows(spark, 0, 200_000, days=4)
        options = {**OPTIONS, MAX_ROWS_PER_SPLIT: "20000"}
        write_table(table, path, partition_by=("day",), options=options)
        history = _history(spark, path)
        live = _live_splits(spark, path)
        assert len(live) == 16 and len(history) == 1

        # 1. Killed while its tasks write: once the first of its 40 splits is in the table.
        left = writers[0].write_until(lambda new: len(new) >= 1)
        assert 1 <= len(left) < 40 and all(f"day={_day(0)}" in str(p) for p in left), left
        assert _history(spark, path) == history
        assert _live_splits(spark, path) == live
        assert _unreferenced(spark, path) == left
        assert _totals_by_day(read_table(spark, path)) == _totals_by_day(table)

        # 2. Killed after every task of its write job finished, while it rewrites: once a
        # ninth split is in the table.
        left2 = writers[1].write_until(lambda new: len(new) >= 9)
        assert len(left2) >= 9 and all(f"day={_day(1)}" in str(p) for p in left2), left2
        assert _history(spark, path) == history
        assert _live_splits(spark, path) == live
        assert _unreferenced(spark, path) == left | left2
        assert_same_rows(read_table(spark, path), table)
    finally:
        for writer in writers:
            writer.kill()

    # The next replaceWhere, from this session, commits beside the leftovers.
    new = log_rows(spark, 3_000_000, 1_000, days=1)
    new.write.format("indextables").mode("overwrite").option("replaceWhere", day1).save(path)
    expected = table.filter(F.col("day") != F.lit(_day(0))).unionByName(new)
    assert_same_rows(read_table(spark, path), expected)
    latest = _history(spark, path)
    assert [r.version for r in latest] == [1, 0]
    assert latest[0].operation == "REPLACE WHERE"
    assert latest[0].operation_parameters["predicate"] == day1
    assert _unreferenced(spark, path) >= left | left2


# ---------------------------------------------------------------------------------------------
# Two overwrites at once
# ---------------------------------------------------------------------------------------------


def _held(df: DataFrame, flag: Path, started: Path) -> DataFrame:
    """df in one task whose rows pass through a Python UDF that, at the first row, touches
    `started` and then waits until `flag` exists: a write of it is planned and running, and
    does not reach its commit before the flag is set."""
    flag_name, started_name = str(flag), str(started)

    def hold(message: str) -> str:
        import time

        if not os.path.exists(flag_name):
            open(started_name, "a").close()
            deadline = time.monotonic() + 120
            while not os.path.exists(flag_name) and time.monotonic() < deadline:
                time.sleep(0.02)
        return message

    return df.coalesce(1).withColumn("message", F.udf(hold, "string")(F.col("message")))


def _race(
    path: str,
    tmp: Path,
    slow: Callable[[DataFrame], DataFrameWriter],
    slow_rows: DataFrame,
    fast: Callable[[], None],
) -> BaseException | None:
    """Starts the write `slow(held rows).save(path)` in a thread; once its task runs (its write
    planned on the table's version of that moment), runs `fast()`, which commits; then lets the
    slow write go on to its commit. Returns what the slow write raised, if anything."""
    flag, started = tmp / f"go-{time.monotonic_ns()}", tmp / f"started-{time.monotonic_ns()}"
    raised: list[BaseException] = []

    def run() -> None:
        try:
            slow(_held(slow_rows, flag, started)).save(path)
        except BaseException as e:  # noqa: BLE001 (handed to the test thread)
            raised.append(e)

    thread = threading.Thread(target=run, name="slow-overwrite")
    thread.start()
    try:
        wait_until(lambda: started.exists() or not thread.is_alive(), "the slow write's task")
        assert thread.is_alive(), f"the slow write ended before it was held: {raised}"
        fast()
    finally:
        flag.touch()
        thread.join(timeout=PATIENCE_S)
    assert not thread.is_alive(), "the slow write did not finish"
    return raised[0] if raised else None


def _replace_where(predicate: str) -> Callable[[DataFrame], DataFrameWriter]:
    return lambda df: (
        df.write.format("indextables").mode("overwrite").option("replaceWhere", predicate)
    )


def test_concurrent_overwrites_conflict_and_the_loser_commits_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "table")
    table = log_rows(spark, 0, 4_000, days=4)
    write_table(table, path, partition_by=("day",), options={**OPTIONS, MAX_ROWS_PER_SPLIT: "500"})
    expected = table

    def check_conflict(error: BaseException | None, detail: str) -> None:
        assert error is not None, "the second overwrite committed over the first one"
        # Raised by PySpark's own call as the Python type, with nothing converted by hand.
        assert isinstance(error, ConcurrentCommitError), type(error)
        assert error.error_class == "INDEXTABLES_CONCURRENT_COMMIT"
        text = error_text(error)
        assert "INDEXTABLES_CONCURRENT_COMMIT" in text, text
        assert "another writer changed the rows it replaces" in text, text
        assert "Nothing was committed" in text and detail in text, text

    # 1. Both replace day 2: the first to commit removes the splits the second planned to
    # remove, so the second fails; nothing of it is committed and its splits are deleted.
    day2 = f"day = DATE'{_day(1)}'"
    first = log_rows(spark, 10_000, 300, days=1, first_day=1)
    second = log_rows(spark, 20_000, 200, days=1, first_day=1)
    versions = len(_history(spark, path))
    files = set(split_files(path))
    error = _race(
        path,
        tmp_path,
        _replace_where(day2),
        second,
        lambda: _replace_where(day2)(first).save(path),
    )
    check_conflict(error, "was removed")
    history = _history(spark, path)
    assert len(history) == versions + 1
    assert history[0].operation == "REPLACE WHERE"
    assert history[0].operation_parameters["predicate"] == day2
    assert set(split_files(path)) - files <= _live_splits(spark, path), "the loser left splits"
    expected = expected.filter(F.col("day") != F.lit(_day(1))).unionByName(first)
    assert_same_rows(read_table(spark, path), expected)

    # 2. A replaceWhere that rewrites the splits it cuts through (day 3's ERROR rows), while an
    # append adds day-3 ERROR rows it would have had to replace: it fails, and the splits of the
    # rows it kept are deleted with those it wrote.
    errors_of_day3 = f"day = DATE'{_day(2)}' AND level = 'ERROR'"
    appended = log_rows(spark, 30_000, 100, days=1, first_day=2, level="ERROR")
    replacing = log_rows(spark, 40_000, 100, days=1, first_day=2, level="ERROR")
    files = set(split_files(path))
    error = _race(
        path,
        tmp_path,
        _replace_where(errors_of_day3),
        replacing,
        lambda: write_table(appended, path, mode="append"),
    )
    check_conflict(error, "was added")
    history = _history(spark, path)
    assert len(history) == versions + 2 and history[0].operation == "WRITE"
    assert set(split_files(path)) - files <= _live_splits(spark, path), "the loser left splits"
    expected = expected.unionByName(appended)
    assert_same_rows(read_table(spark, path), expected)

    # 3. Overwrites of different partitions do not conflict: both commit, in the order they
    # reach their commits, each over the other's result.
    day1, day4 = f"day = DATE'{_day(0)}'", f"day = DATE'{_day(3)}'"
    new1 = log_rows(spark, 50_000, 150, days=1, first_day=0)
    new4 = log_rows(spark, 60_000, 250, days=1, first_day=3)
    error = _race(
        path,
        tmp_path,
        _replace_where(day4),
        new4,
        lambda: _replace_where(day1)(new1).save(path),
    )
    assert error is None, error_text(error)
    history = _history(spark, path)
    assert len(history) == versions + 4
    assert [h.operation_parameters["predicate"] for h in history[:2]] == [day4, day1]
    expected = expected.filter(~F.col("day").isin(_day(0), _day(3))).unionByName(new1)
    assert_same_rows(read_table(spark, path), expected.unionByName(new4))
