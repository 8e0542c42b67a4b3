"""DELETE, UPDATE and MERGE INTO against Delta Lake 3.3.2 (tests/delta_oracle.py), on both
layouts: one generated sequence of appends, DELETEs (plain and by `indexquery`), UPDATEs,
MERGEs, MERGE SPLITS and time travel runs on an IndexTables table and on a Delta table with
deletion vectors, and after every statement both return the same counts and answer the same
filters, text queries, COUNT, pushed aggregates and LIMIT."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from delta_oracle import DeltaTable
from helpers import TEXT, TYPEMAP, assert_same_rows, read_table, write_table

pytestmark = pytest.mark.usefixtures("layout")

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


def _rows(spark: SparkSession, first: int, n: int, tag: str = "") -> DataFrame:
    ids = spark.range(first, first + n, numPartitions=2)
    word = F.element_at(F.array(*[F.lit(w) for w in WORDS]), (F.col("id") % 6 + 1).cast("int"))
    return ids.select(
        F.col("id"),
        F.concat(F.lit("user"), (F.col("id") % 11).cast("string")).alias("user"),
        F.concat_ws(" ", F.lit("event"), word, F.lit(tag + "x"), F.col("id").cast("string")).alias(
            "msg"
        ),
        (F.col("id") % 17).cast("int").alias("n"),
    )


def _step_statements(rng: random.Random, step: int) -> tuple[str, str]:
    """One generated statement: (ours, Delta's twin)."""
    user = f"user{rng.randrange(11)}"
    word = rng.choice(WORDS)
    n = rng.randrange(17)
    kind = step % 5
    if kind == 0:
        s = f"DELETE FROM {{table}} WHERE user = '{user}' AND n > {n}"
        return s, s
    if kind == 1:
        return (
            f"DELETE FROM {{table}} WHERE msg indexquery '{word}' AND n < {n}",
            f"DELETE FROM {{table}} WHERE msg LIKE '% {word} %' AND n < {n}",
        )
    if kind == 2:
        s = f"UPDATE {{table}} SET n = n + 100, user = 'moved' WHERE user = '{user}'"
        return s, s
    if kind == 3:
        return (
            f"UPDATE {{table}} SET msg = 'rewritten {word} y' WHERE msg indexquery '{word}'"
            f" AND n = {n}",
            f"UPDATE {{table}} SET msg = 'rewritten {word} y' WHERE msg LIKE '% {word} %'"
            f" AND n = {n}",
        )
    s = (
        "MERGE INTO {table} t USING src s ON t.id = s.id "
        "WHEN MATCHED AND s.n % 3 = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT * "
        f"WHEN NOT MATCHED BY SOURCE AND t.n = {n} THEN UPDATE SET user = 'orphan'"
    )
    return s, s


def _compare(spark: SparkSession, ours: str, delta: DeltaTable, pushed: bool) -> None:
    """Every answer equal to Delta's; `pushed`: the grouped aggregate must be answered by the
    index (not over merged companion splits, whose aggregates Spark computes)."""
    mine = read_table(spark, ours)
    # Delta's rows of this version, read once: its answers to every query below come from them.
    theirs = delta.read().cache()
    try:
        assert_same_rows(mine, theirs)
        for ours_q, twin in [
            ("n > 8", "n > 8"),
            ("user = 'user3'", "user = 'user3'"),
            ("msg indexquery 'charlie'", "msg LIKE '% charlie %'"),
        ]:
            assert_same_rows(mine.where(ours_q), theirs.where(twin))
        assert mine.count() == theirs.count()
        grouped = mine.groupBy("user").agg(F.count("*"), F.sum("n"), F.min("id"), F.max("n"))
        plan = grouped._jdf.queryExecution().executedPlan().toString()
        assert ("PushedAggregation" in plan) == pushed, plan
        assert_same_rows(
            grouped, theirs.groupBy("user").agg(F.count("*"), F.sum("n"), F.min("id"), F.max("n"))
        )
        limited = mine.where("n < 5").limit(7).collect()
        small = theirs.where("n < 5").collect()
        assert len(limited) == min(7, len(small))
        assert {r.id for r in limited} <= {r.id for r in small}
    finally:
        theirs.unpersist()


def test_a_generated_sequence_matches_delta(
    spark: SparkSession, layout: str, tmp_path: Path
) -> None:
    rng = random.Random(30 + len(layout))
    ours = str(tmp_path / "indextables")
    first = _rows(spark, 0, 400)
    for part in range(2):
        write_table(
            first.where(F.col("id") % 2 == part),
            ours,
            mode="append",
            options={TYPEMAP + "msg": TEXT},
        )
    delta = DeltaTable.create(spark, str(tmp_path / "delta"), first)
    ours_name = f"indextables.`{ours}`"
    versions: list[tuple[int, int]] = []  # (our version, Delta's) after each statement
    for step in range(10):
        if step == 4:
            more = _rows(spark, 400, 60, "more")
            write_table(more, ours, mode="append", options={TYPEMAP + "msg": TEXT})
            delta.append(more)
        if step == 6:
            spark.sql(f"MERGE SPLITS '{ours}'").collect()
        base = rng.randrange(0, 460)
        source = _rows(spark, base, 40, f"s{step}")
        source.withColumn("n", (F.col("n") + step) % 17).createOrReplaceTempView("src")
        statement, twin = _step_statements(rng, step)
        (got,) = spark.sql(statement.replace("{table}", ours_name)).collect()
        (want,) = delta.sql(twin)
        assert got.asDict() == want.asDict(), (statement, got, want)
        _compare(spark, ours, delta, pushed=layout == "splits" or step < 6)
        (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{ours}'").collect()
        (history,) = delta.sql("DESCRIBE HISTORY {table} LIMIT 1")
        versions.append((int(state.version), int(history.version)))

    # Time travel: an earlier version of each shows the same rows.
    ours_v, delta_v = versions[3]
    assert_same_rows(
        spark.read.format("indextables").option("versionAsOf", ours_v).load(ours),
        spark.read.format("delta").option("versionAsOf", delta_v).load(delta.path),
    )
