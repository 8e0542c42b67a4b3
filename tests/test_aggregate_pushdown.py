"""COUNT(*) aggregate pushdown: each split answers with one partial row per group.

Every answer is checked against the same query on a Parquet copy of the rows; whether the
aggregate was pushed is read from the executed plan: the scan's description
(`PushedAggregation: [COUNT(*)]`) and the rows the scan node shipped to Spark (numOutputRows).
"""

from __future__ import annotations

import uuid
from typing import Any, Callable

import pytest
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from helpers import assert_same_rows, plan_nodes, read_table, scan_node, split_files, write_table

pytestmark = pytest.mark.usefixtures("layout")


def _scan_rows(df: DataFrame) -> int:
    """Rows the BatchScan node shipped to Spark, from the executed plan's metrics."""
    df.collect()
    scans = [
        n
        for n in plan_nodes(df._jdf.queryExecution().executedPlan())
        if n.getClass().getSimpleName() in ("BatchScanExec", "IndexTablesLocalScanExec")
    ]
    assert scans, "no scan in the executed plan"
    return sum(int(n.metrics().get("numOutputRows").get().value()) for n in scans)


def _count(cond: Column | None) -> Callable[[DataFrame], DataFrame]:
    return lambda d: (d if cond is None else d.filter(cond)).agg(F.count(F.lit(1)).alias("n"))


@pytest.fixture(scope="module")
def table(spark: SparkSession, logs_table: str) -> DataFrame:
    return read_table(spark, logs_table)


@pytest.fixture(scope="module")
def splits(logs_table: str) -> int:
    return len(split_files(logs_table))


# Filters the converter translates exactly: the native query selects exactly Spark's rows.
EXACT: dict[str, Callable[[], Column | None]] = {
    "no_filter": lambda: None,
    "string_equal": lambda: F.col("level") == "ERROR",
    "double_range": lambda: (F.col("latency_ms") >= 10) & (F.col("latency_ms") < 50),
    "is_null": lambda: F.col("host").isNull(),
    "in_or_range": lambda: F.col("level").isin("WARN", "INFO") | (F.col("status") == 500),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_count_star_with_exact_filters_is_pushed(
    table: DataFrame, logs_parquet: DataFrame, splits: int, name: str
) -> None:
    q = _count(EXACT[name]())
    line = scan_node(q(table))
    assert "PushedAggregation: [COUNT(*)], PushedGroupBy: []" in line, line
    assert _scan_rows(q(table)) <= splits
    assert_same_rows(q(table), q(logs_parquet))


@pytest.mark.parametrize(
    "make_cond",
    [
        lambda: F.col("message").contains("failed"),  # text: a token superset, Spark re-checks
        lambda: F.col("host").contains("node"),  # raw string wildcard: a superset
        lambda: F.col("ts") > F.lit("2024-03-02 10:00:00").cast("timestamp"),  # widened
    ],
    ids=["text_contains", "string_contains", "timestamp_range"],
)
def test_count_star_with_inexact_filters_is_not_pushed(
    table: DataFrame, logs_parquet: DataFrame, make_cond: Callable[[], Column]
) -> None:
    q = _count(make_cond())
    line = scan_node(q(table))
    assert "PushedAggregation" not in line, line
    assert_same_rows(q(table), q(logs_parquet))


@pytest.mark.parametrize(
    "make_cond", [lambda: None, lambda: F.col("status") >= 400], ids=["all", "filtered"]
)
def test_group_by_string_column_is_pushed_with_its_null_group(
    table: DataFrame, logs_parquet: DataFrame, splits: int, make_cond: Callable[[], Any]
) -> None:
    cond = make_cond()

    def q(d: DataFrame) -> DataFrame:
        return (d if cond is None else d.filter(cond)).groupBy("host").agg(F.count("*").alias("n"))

    line = scan_node(q(table))
    assert "PushedAggregation: [COUNT(*)], PushedGroupBy: [host]" in line, line
    expected = q(logs_parquet)
    assert expected.filter(F.col("host").isNull()).count() == 1, "the data should hold null hosts"
    assert _scan_rows(q(table)) <= splits * expected.count()
    assert_same_rows(q(table), expected)


def test_group_by_text_column_is_not_pushed_and_numeric_is(
    table: DataFrame, logs_parquet: DataFrame
) -> None:
    # A text column's fast terms are its tokens, not its values; an integer's are its values.
    assert "PushedAggregation" not in scan_node(table.groupBy("message").count())
    assert "PushedGroupBy: [status]" in scan_node(table.groupBy("status").count())
    for col in ("message", "status"):
        assert_same_rows(table.groupBy(col).count(), logs_parquet.groupBy(col).count())


def test_metrics_of_fast_columns_are_pushed(table: DataFrame, logs_parquet: DataFrame) -> None:
    def q(d: DataFrame) -> DataFrame:
        return d.agg(F.count("status").alias("c"), F.max("latency_ms").alias("m"))

    assert "PushedAggregation: [COUNT(status), MAX(latency_ms)]" in scan_node(q(table))
    assert_same_rows(q(table), q(logs_parquet))


@pytest.fixture(scope="module")
def partitioned(
    spark: SparkSession, logs_df: DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> tuple[DataFrame, DataFrame]:
    source = logs_df.select("id", "day", "level", "host", "status")
    path = str(tmp_path_factory.mktemp("agg_partitioned") / "table")
    write_table(source, path, partition_by=("day",))
    return read_table(spark, path), source


@pytest.mark.parametrize(
    "groups", [("day",), ("day", "level")], ids=["partition", "partition_and_string"]
)
def test_group_by_partition_columns_is_pushed(
    partitioned: tuple[DataFrame, DataFrame], groups: tuple[str, ...]
) -> None:
    table, source = partitioned

    def q(d: DataFrame) -> DataFrame:
        return d.filter(F.col("status") >= 300).groupBy(*groups).agg(F.count("*").alias("n"))

    line = scan_node(q(table))
    assert f"PushedGroupBy: [{', '.join(groups)}]" in line, line
    assert_same_rows(q(table), q(source))


def _jobs_run(spark: SparkSession, df: DataFrame) -> tuple[list[Any], int]:
    """df's rows, and how many Spark jobs collecting them ran."""
    sc = spark.sparkContext
    # A fresh group name each time: an id() is reused once its object is collected, and a
    # reused group would count an earlier query's jobs.
    group = f"agg-jobs-{uuid.uuid4()}"
    sc.setJobGroup(group, "counting jobs")
    try:
        rows = df.collect()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    # The status tracker learns of jobs from the listener bus, asynchronously: let it catch up.
    sc._jsc.sc().listenerBus().waitUntilEmpty()
    return rows, len(sc.statusTracker().getJobIdsForGroup(group))


@pytest.mark.parametrize(
    "make_cond",
    [lambda: None, lambda: F.col("day").isNotNull(), lambda: F.col("day") > F.lit("2024-03-02")],
    ids=["no_filter", "partition_not_null", "partition_range"],
)
def test_count_with_partition_filters_is_answered_by_the_log_without_a_task(
    spark: SparkSession,
    partitioned: tuple[DataFrame, DataFrame],
    make_cond: Callable[[], Column | None],
) -> None:
    table, source = partitioned
    q = _count(make_cond())
    line = scan_node(q(table))
    assert "AnsweredFromLog: true" in line and "Tasks: 0" in line, line
    rows, jobs = _jobs_run(spark, q(table))
    assert jobs == 0
    assert rows == q(source).collect()


def test_count_grouped_by_partition_columns_is_answered_by_the_log(
    spark: SparkSession, partitioned: tuple[DataFrame, DataFrame]
) -> None:
    table, source = partitioned
    grouped = table.groupBy("day").agg(F.count("*").alias("n"))
    assert "PushedGroupBy: [day], AnsweredFromLog: true" in scan_node(grouped)
    assert _jobs_run(spark, grouped)[1] == 0
    assert_same_rows(grouped, source.groupBy("day").agg(F.count("*").alias("n")))


def test_min_max_of_timestamps_and_integers_is_answered_by_the_log_statistics(
    spark: SparkSession,
    partitioned: tuple[DataFrame, DataFrame],
    table: DataFrame,
    logs_parquet: DataFrame,
) -> None:
    partitioned_table, source = partitioned

    def q(d: DataFrame) -> DataFrame:
        return d.groupBy("day").agg(
            F.min("id").alias("lo"), F.max("status").alias("hi"), F.count("*").alias("n")
        )

    assert "AnsweredFromLog: true" in scan_node(q(partitioned_table))
    assert _jobs_run(spark, q(partitioned_table))[1] == 0
    assert_same_rows(q(partitioned_table), q(source))

    # Timestamps: fast fields hold seconds, the log's statistics the microseconds.
    def ts(d: DataFrame) -> DataFrame:
        return d.agg(F.min("ts").alias("lo"), F.max("ts").alias("hi"))

    assert "AnsweredFromLog: true" in scan_node(ts(table))
    assert_same_rows(ts(table), ts(logs_parquet))


def test_partition_filter_with_a_data_filter_is_pushed_to_the_splits(
    partitioned: tuple[DataFrame, DataFrame],
) -> None:
    table, source = partitioned

    def q(d: DataFrame) -> DataFrame:
        return (
            d.filter((F.col("day") > F.lit("2024-03-02")) & (F.col("status") >= 400))
            .groupBy("level")
            .agg(F.count("*").alias("n"), F.sum("status").alias("s"))
        )

    line = scan_node(q(table))
    assert "PushedGroupBy: [level]" in line and "AnsweredFromLog" not in line, line
    assert_same_rows(q(table), q(source))


def test_require_aggregate_pushdown_turns_the_fallback_into_an_error(
    spark: SparkSession, logs_table: str, logs_parquet: DataFrame
) -> None:
    strict = (
        spark.read.format("indextables")
        .option("spark.indextables.read.requireAggregatePushdown", "true")
        .load(logs_table)
    )
    # Pushed: fine.
    assert_same_rows(
        strict.groupBy("level").agg(F.sum("status").alias("s")),
        logs_parquet.groupBy("level").agg(F.sum("status").alias("s")),
    )
    # A text filter Spark must re-check: the aggregate cannot be pushed, and that is an error.
    with pytest.raises(Exception) as caught:
        strict.filter(F.col("message").contains("failed")).agg(F.sum("status")).collect()
    assert "INDEXTABLES_AGGREGATE_NOT_PUSHED" in str(caught.value)
    assert "requireAggregatePushdown" in str(caught.value)


def test_group_with_more_values_than_one_terms_aggregation_returns_is_exact(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # 10,000 buckets per terms aggregation: a split with 24,000 distinct keys is counted from
    # the stored values instead, nulls included.
    schema = StructType([StructField("k", StringType(), True), StructField("v", LongType())])
    rows = [(None if i % 97 == 0 else f"key-{i % 24000:05d}", i) for i in range(30000)]
    source = spark.createDataFrame(rows, schema).coalesce(1)
    path = str(tmp_path_factory.mktemp("agg_many") / "table")
    write_table(source, path)
    table = read_table(spark, path)
    parquet_path = str(tmp_path_factory.mktemp("agg_many") / "parquet")
    source.write.parquet(parquet_path)
    oracle = spark.read.parquet(parquet_path)

    def q(d: DataFrame) -> DataFrame:
        return d.filter(F.col("v") >= 10).groupBy("k").agg(F.count("*").alias("n"))

    assert "PushedGroupBy: [k]" in scan_node(q(table))
    assert_same_rows(q(table), q(oracle))


@pytest.mark.parametrize(
    "columns",
    ["k string, v long, m string", "k string, m string"],
    ids=["long_with_nulls", "strings"],
)
def test_count_over_an_indexquery_counts_rows_without_the_counted_value(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, columns: str
) -> None:
    # A filtered split is counted by a value count on a fast field (the first numeric, else a
    # string one) plus the matches lacking a value: rows with a null there must still count.
    words = ["alpha beta", "beta gamma", "gamma", "Beta-delta"]
    kvm = [
        (None if i % 3 == 0 else f"k{i % 5}", None if i % 4 == 0 else i, words[i % 4])
        for i in range(2000)
    ]
    rows: list[tuple[str | None, int | None, str]] | list[tuple[str | None, str]] = kvm
    if "v long" not in columns:
        rows = [(k, m) for k, _, m in kvm]
    source = spark.createDataFrame(rows, columns).coalesce(2)
    path = str(tmp_path_factory.mktemp("agg_count") / "table")
    write_table(source, path, options={"spark.indextables.indexing.typemap.m": "text"})
    read_table(spark, path).createOrReplaceTempView("agg_count_t")
    df = spark.sql("SELECT COUNT(*) AS n FROM agg_count_t WHERE m indexquery 'beta'")
    assert "PushedAggregation: [COUNT(*)]" in scan_node(df)
    assert df.collect()[0]["n"] == sum(
        1 for r in rows if "beta" in r[-1].lower().replace("-", " ").split()
    )


DRIVER_MAX_SPLITS = "spark.indextables.read.aggregate.driverMaxSplits"


@pytest.mark.parametrize(
    "make_query",
    [
        lambda d: d.groupBy("level").agg(F.count("*").alias("n")),
        lambda d: d.groupBy("host", "level").agg(F.round(F.avg("latency_ms"), 6).alias("a")),
        lambda d: d.filter(F.col("level") == "ERROR").agg(
            F.sum("status").alias("s"), F.min("latency_ms").alias("lo"), F.count("*").alias("n")
        ),
        lambda d: d.groupBy(
            F.call_function("indextables_date_histogram", F.col("ts"), F.lit("1h")).alias("h")
        ).agg(F.count("*").alias("n"), F.max("status").alias("m")),
    ],
    ids=["level_count", "host_level_avg", "filtered_metrics", "hourly"],
)
def test_small_aggregations_are_answered_on_the_driver_without_a_job(
    spark: SparkSession,
    logs_table: str,
    logs_parquet: DataFrame,
    splits: int,
    make_query: Callable[[DataFrame], DataFrame],
) -> None:
    on_driver = make_query(read_table(spark, logs_table))
    line = scan_node(on_driver)
    assert "AnsweredOnDriver: true" in line and "Tasks: 0" in line, line
    rows, jobs = _jobs_run(spark, on_driver)
    assert jobs == 0
    # The same query read by tasks (threshold below the split count) gives the same rows.
    tasks = make_query(
        spark.read.format("indextables").option(DRIVER_MAX_SPLITS, str(splits - 1)).load(logs_table)
    )
    task_line = scan_node(tasks)
    assert "PushedAggregation" in task_line and "AnsweredOnDriver" not in task_line, task_line
    assert _jobs_run(spark, tasks)[1] > 0
    assert_same_rows(on_driver, make_query(logs_parquet))
    assert_same_rows(tasks, make_query(logs_parquet))


def test_local_mode_answers_aggregations_of_many_splits_on_the_driver(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # In local mode a job's tasks would run in the driver's JVM on the same cores: by default
    # the driver answers whatever the split count. The cluster limit (32) still applies when
    # set, and gives the same rows through tasks.
    assert str(spark.sparkContext.master).startswith("local")
    rows = [(i, f"k{i % 6}" if i % 13 else None, i % 97) for i in range(4000)]
    source = spark.createDataFrame(rows, "id long, k string, v long")
    path = str(tmp_path_factory.mktemp("agg_many_splits") / "table")
    write_table(source, path, options={"spark.indextables.maxRowsPerSplit": "100"})
    splits = len(split_files(path))
    assert splits > 32

    def q(d: DataFrame) -> DataFrame:
        return d.groupBy("k").agg(F.count("*").alias("n"), F.sum("v").alias("s"))

    on_driver = q(read_table(spark, path))
    line = scan_node(on_driver)
    assert "AnsweredOnDriver: true" in line and f"Splits: {splits}/{splits}, Tasks: 0" in line
    assert _jobs_run(spark, on_driver)[1] == 0
    tasks = q(spark.read.format("indextables").option(DRIVER_MAX_SPLITS, "32").load(path))
    task_line = scan_node(tasks)
    assert "PushedAggregation" in task_line and "AnsweredOnDriver" not in task_line, task_line
    assert _jobs_run(spark, tasks)[1] > 0
    assert_same_rows(on_driver, q(source))
    assert_same_rows(tasks, q(source))
