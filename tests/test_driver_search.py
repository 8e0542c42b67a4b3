"""Small searches answered on the driver, with no Spark job (read/DriverSearch), on both layouts.

A table of six appends (six splits or more) is searched through the driver and through tasks
(`spark.indextables.read.driverSearch.maxRows` 0), and the two answers must be the same rows; an
exact filter is also checked against the same rows in Parquet. That no job ran is read from
Spark's status tracker: every job of a job group set around the query.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import FORMAT, assert_same_rows, read_table

pytestmark = pytest.mark.usefixtures("layout")

MAX_ROWS = "spark.indextables.read.driverSearch.maxRows"


@pytest.fixture(scope="module")
def appended(
    spark: SparkSession, logs_df: DataFrame, layout: str, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """The logs as six appends, `message` as text."""
    path = str(tmp_path_factory.mktemp(f"driver-search-{layout}") / "table")
    for i in range(6):
        (
            logs_df.where(F.col("id") % 6 == i)
            .write.format(FORMAT)
            .option("spark.indextables.indexing.typemap.message", "text")
            .mode("append")
            .save(path)
        )
    return path


@pytest.fixture
def max_rows(spark: SparkSession) -> Iterator[Callable[[int], None]]:
    """Sets the driver's row bound for the test; the default again afterwards."""
    yield lambda n: spark.conf.set(MAX_ROWS, str(n))
    spark.conf.unset(MAX_ROWS)


def jobs_of(spark: SparkSession, action: Callable[[], Any]) -> tuple[Any, int]:
    """`action`'s result, and how many Spark jobs it ran (planning included)."""
    sc = spark.sparkContext
    group = f"driver-search-{uuid.uuid4()}"
    sc.setJobGroup(group, "driver search test")
    try:
        result = action()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    # The status tracker learns of jobs from the listener bus, asynchronously: let it catch up.
    sc._jsc.sc().listenerBus().waitUntilEmpty()
    return result, len(sc.statusTracker().getJobIdsForGroup(group))


def plan_of(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def by_tasks(spark: SparkSession, df: Callable[[], DataFrame]) -> list[Any]:
    """The rows of `df()` read by tasks, as the oracle of the driver's answer."""
    spark.conf.set(MAX_ROWS, "0")
    try:
        built = df()
        assert "AnsweredOnDriver" not in plan_of(built)
        return built.collect()
    finally:
        spark.conf.unset(MAX_ROWS)


def rare_word(spark: SparkSession, path: str) -> tuple[str, int]:
    """A word of `message` that few rows (2 to 60) hold, and how many."""
    words = (
        read_table(spark, path)
        .select(F.explode(F.split(F.lower("message"), "[^a-z]+")).alias("w"))
        .where(F.length("w") > 4)
        .groupBy("w")
        .count()
        .where((F.col("count") >= 2) & (F.col("count") <= 40))
        .orderBy("w")
        .limit(20)
        .collect()
    )
    assert words, "the logs hold no rare word"
    for w in words:
        n = read_table(spark, path).where(F.expr(f"message indexquery '{w.w}'")).count()
        if 2 <= n <= 60:
            return str(w.w), n
    raise AssertionError(f"no word of {words} matches 2 to 60 rows through the index")


def test_a_rare_search_is_answered_on_the_driver_with_no_job(
    spark: SparkSession, appended: str
) -> None:
    word, n = rare_word(spark, appended)

    def query() -> DataFrame:
        return read_table(spark, appended).where(F.expr(f"message indexquery '{word}'"))

    rows, jobs = jobs_of(spark, lambda: query().collect())
    assert jobs == 0
    assert len(rows) == n
    assert "AnsweredOnDriver: true" in plan_of(query()), plan_of(query())
    assert sorted(rows) == sorted(by_tasks(spark, query))

    # Some columns only, and a filter Spark keeps on top of the search: still no job.
    def narrowed() -> DataFrame:
        return query().where(F.length("message") > 30).select("id", "host", "day")

    rows, jobs = jobs_of(spark, lambda: narrowed().collect())
    assert jobs == 0
    # What Spark checks of the filters is checked on the driver too, and EXPLAIN says so.
    assert "(length(message) > 30))" in plan_of(narrowed()).split("Filter: ")[1], plan_of(
        narrowed()
    )
    assert sorted(rows) == sorted(by_tasks(spark, narrowed))


def test_exact_filters_match_parquet_on_the_driver(
    spark: SparkSession, appended: str, logs_parquet: DataFrame
) -> None:
    condition = (F.col("host") == "node-03.dc1.example.com") & (F.col("status") == 503)
    found = read_table(spark, appended).where(condition)
    plan = plan_of(found)
    assert "AnsweredOnDriver: true" in plan, plan
    assert_same_rows(found, logs_parquet.where(condition))


def test_a_search_of_many_matches_goes_to_tasks_and_a_small_limit_stays(
    spark: SparkSession, appended: str, logs_parquet: DataFrame
) -> None:
    common = read_table(spark, appended).where(F.col("status") == 200)
    assert "AnsweredOnDriver" not in plan_of(common)
    count, jobs = jobs_of(spark, common.count)
    assert count == logs_parquet.where(F.col("status") == 200).count() > 1000
    (rows, jobs) = jobs_of(spark, lambda: common.select("id", "status").collect())
    assert jobs > 0 and len(rows) == count

    # A LIMIT under the bound is always small: read on the driver.
    def limited() -> DataFrame:
        return read_table(spark, appended).where(F.col("status") == 200).limit(7)

    assert "AnsweredOnDriver: true" in plan_of(limited())
    rows, jobs = jobs_of(spark, lambda: limited().collect())
    assert jobs == 0
    assert len(rows) == 7 and all(r.status == 200 for r in rows)


def test_the_bound_decides_and_zero_turns_it_off(
    spark: SparkSession, appended: str, max_rows: Callable[[int], None]
) -> None:
    word, n = rare_word(spark, appended)

    def query() -> DataFrame:
        return read_table(spark, appended).where(F.expr(f"message indexquery '{word}'"))

    max_rows(n)
    assert "AnsweredOnDriver: true" in plan_of(query())
    rows, jobs = jobs_of(spark, lambda: query().collect())
    assert (len(rows), jobs) == (n, 0)
    max_rows(n - 1)
    assert "AnsweredOnDriver" not in plan_of(query())
    rows, jobs = jobs_of(spark, lambda: query().collect())
    assert len(rows) == n and jobs > 0
    max_rows(0)
    assert "AnsweredOnDriver" not in plan_of(query())


def test_deleted_rows_never_come_back_on_the_driver(
    spark: SparkSession, logs_df: DataFrame, layout: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = str(tmp_path_factory.mktemp(f"driver-deletes-{layout}") / "table")
    for i in range(3):
        logs_df.where(F.col("id") % 3 == i).write.format(FORMAT).mode("append").save(path)
    condition = (F.col("host") == "node-01.dc2.example.com") & (F.col("status") == 404)
    before = read_table(spark, path).where(condition).select("id").collect()
    assert 0 < len(before) <= 1000
    doomed = sorted(r.id for r in before)[::2]
    spark.sql(
        f"DELETE FROM indextables.`{path}` WHERE id IN ({', '.join(map(str, doomed))})"
    ).collect()
    found = read_table(spark, path).where(condition)
    assert "AnsweredOnDriver: true" in plan_of(found)
    ids = {r.id for r in found.select("id").collect()}
    assert ids == {r.id for r in before} - set(doomed)
