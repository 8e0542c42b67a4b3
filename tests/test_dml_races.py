"""Row-level statements racing other writers: two DELETEs, an append and a MERGE SPLITS started
together on one table, round after round. Each statement either commits or fails with the
conflict error (INDEXTABLES_CONCURRENT_COMMIT, asking to run it again); whatever the order, the
table then holds exactly the rows the committed statements leave: no deleted row comes back (a
MERGE SPLITS that read a split before a DELETE marked rows in it must not commit it merged), and
no row is lost. The statements run in threads of one session, as concurrent jobs; they commit
through the table's log as separate processes would."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import error_text, read_table, write_table

pytestmark = pytest.mark.usefixtures("layout")

ROUNDS = 2
USERS = 12


def _rows(spark: SparkSession, first: int, count: int) -> DataFrame:
    return spark.range(first, first + count).select(
        F.col("id"),
        F.concat(F.lit("user"), (F.col("id") % USERS).cast("string")).alias("user"),
        F.concat(F.lit("event tag"), (F.col("id") % 5).cast("string"), F.lit(" done")).alias("msg"),
    )


def _appended(spark: SparkSession, first: int, count: int) -> DataFrame:
    """Rows no DELETE of the test matches."""
    return spark.range(first, first + count).select(
        F.col("id"), F.lit("appended").alias("user"), F.lit("appended event").alias("msg")
    )


def _race(statements: dict[str, Callable[[], object]]) -> dict[str, str | None]:
    """Runs the statements at once, each in its own thread; None for each that succeeded, else
    its error's text."""
    start = threading.Barrier(len(statements))
    outcome: dict[str, str | None] = {}

    def run(name: str, statement: Callable[[], object]) -> None:
        start.wait()
        try:
            result = statement()
            if isinstance(result, DataFrame):
                result.collect()
            outcome[name] = None
        except Exception as e:  # noqa: BLE001 (the statement's failure is the outcome)
            outcome[name] = error_text(e)

    threads = [threading.Thread(target=run, args=item) for item in statements.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert len(outcome) == len(statements), "a statement did not finish"
    return outcome


def test_deletes_racing_an_append_a_merge_splits_and_each_other(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "table")
    name = f"indextables.`{path}`"
    options = {"spark.indextables.indexing.typemap.msg": "text"}
    for k in range(6):
        write_table(_rows(spark, k * 500, 500), path, mode="append", options=options)
    alive = set(range(3000))
    next_id = 100_000
    for rnd in range(ROUNDS):
        # The first DELETE takes one user (in every split), the second one text term: both touch
        # every split, so they conflict with each other and with the merge. The appended rows
        # match neither, so they stay whatever the order.
        user, tag = f"user{rnd}", f"tag{rnd + 2}"
        deletes = {
            "delete-user": (f"DELETE FROM {name} WHERE user = '{user}'", f"user = '{user}'"),
            "delete-text": (
                f"DELETE FROM {name} WHERE msg indexquery '{tag}'",
                f"msg LIKE '%{tag} %'",
            ),
        }
        appended = range(next_id, next_id + 300)
        next_id += 1000
        new_rows = _appended(spark, appended.start, len(appended))
        statements: dict[str, Callable[[], object]] = {
            k: partial(spark.sql, s) for k, (s, _) in deletes.items()
        }
        statements["append"] = partial(write_table, new_rows, path, "append", (), options)
        statements["merge"] = partial(spark.sql, f"MERGE SPLITS '{path}'")
        outcome = _race(statements)
        for statement, error in outcome.items():
            assert error is None or "INDEXTABLES_CONCURRENT_COMMIT" in error, (statement, error)
        assert outcome["append"] is None, outcome
        before = read_table(spark, path)
        for statement, (_, twin) in deletes.items():
            if outcome[statement] is None:
                # Only the first rows can match a DELETE.
                alive -= {r.id for r in _rows(spark, 0, 3000).where(twin).select("id").collect()}
        alive |= set(appended)

        got = [r.id for r in before.select("id").collect()]
        assert len(got) == len(set(got)), f"round {rnd}: a row is there twice"
        assert set(got) == alive, (
            f"round {rnd} ({outcome}): resurrected {sorted(set(got) - alive)[:10]}, "
            f"lost {sorted(alive - set(got))[:10]}"
        )
        # The log's COUNT and a search agree with the scan.
        assert read_table(spark, path).count() == len(alive)
        if outcome["delete-user"] is None:
            assert read_table(spark, path).where(f"user = '{user}'").count() == 0
