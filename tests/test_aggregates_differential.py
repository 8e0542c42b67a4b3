"""Generated aggregate queries give the rows Parquet gives for the same data, pushed or not.

Metrics (COUNT(*), COUNT, SUM, AVG, MIN, MAX) x group keys (none, partition, string, integer,
boolean, date, several at once) x filters (none, exact, partition, left for Spark), on the log
data and on a typed table with NULLs, NaN, large longs and many splits. Exact types must match
exactly; doubles within a relative 1e-9 (Spark and tantivy add in different orders). Whether each
query was pushed is read from the executed plan, and a pushed query must ship at most one row
per group and split.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import pytest
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

import indextables.functions as itf
from helpers import (
    error_text,
    pairwise,
    plan_nodes,
    read_table,
    scan_node,
    split_files,
    write_table,
)

pytestmark = pytest.mark.usefixtures("layout")

Query = Callable[[DataFrame], DataFrame]
# A query's answer: its schema and its rows.
Answer = tuple[StructType, list[Row]]


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return bool(a == b) and type(a) is type(b)


def _key(row: Row) -> str:
    return repr(tuple(round(v, 6) if isinstance(v, float) else v for v in row))


def _assert_same_rows(actual: Answer, expected: Answer) -> None:
    """Same schema, same rows; doubles within a relative 1e-9."""
    assert actual[0] == expected[0], (actual[0], expected[0])
    got = sorted(actual[1], key=_key)
    want = sorted(expected[1], key=_key)
    assert len(got) == len(want), (len(got), len(want), got[:5], want[:5])
    for a, e in zip(got, want):
        assert all(_close(x, y) for x, y in zip(a, e)), f"row {a} != expected {e}"


def assert_same_aggregates(actual_df: DataFrame, expected_df: DataFrame) -> None:
    """Same rows, same types; doubles within a relative 1e-9."""
    _assert_same_rows(
        (actual_df.schema, actual_df.collect()), (expected_df.schema, expected_df.collect())
    )


# The Parquet answers of the generated queries, by query: each runs once, not once per layout.
_PARQUET_ANSWERS: dict[tuple[str, ...], Answer] = {}


def _parquet_answer(key: tuple[str, ...], df: DataFrame) -> Answer:
    if key not in _PARQUET_ANSWERS:
        _PARQUET_ANSWERS[key] = (df.schema, df.collect())
    return _PARQUET_ANSWERS[key]


def _scan_rows(df: DataFrame) -> int:
    """Rows the scan shipped to Spark (its numOutputRows metric); 0 when adaptive execution
    replaced a scan of no partitions by an empty relation."""
    df.collect()
    return _shipped_rows(df)


def _shipped_rows(df: DataFrame) -> int:
    """_scan_rows of a DataFrame that has already run."""
    scans = [
        n
        for n in plan_nodes(df._jdf.queryExecution().executedPlan())
        if n.getClass().getSimpleName() in ("BatchScanExec", "IndexTablesLocalScanExec")
    ]
    return sum(int(n.metrics().get("numOutputRows").get().value()) for n in scans)


def _parquet(spark: SparkSession, df: DataFrame, path: str) -> DataFrame:
    df.write.mode("overwrite").parquet(path)
    return spark.read.parquet(path)


# ---------------------------------------------------------------------------------------------
# The log data (20,000 rows, NULL hosts and levels, `message` typed as text)

LOG_METRICS: list[Callable[[], Column]] = [
    lambda: F.count(F.lit(1)).alias("n"),
    lambda: F.count("status").alias("n_status"),
    lambda: F.sum("status").alias("sum_status"),
    lambda: F.avg("latency_ms").alias("avg_latency"),
    lambda: F.min("latency_ms").alias("min_latency"),
    lambda: F.max("status").alias("max_status"),
    lambda: F.sum("latency_ms").alias("sum_latency"),
    lambda: F.min("day").alias("min_day"),
    lambda: F.max("id").alias("max_id"),
    lambda: F.count("ok").alias("n_ok"),
]

LOG_GROUPS: dict[str, tuple[str, ...]] = {
    "none": (),
    "level": ("level",),
    "host": ("host",),
    "status": ("status",),
    "ok": ("ok",),
    "day": ("day",),
    "level_host": ("level", "host"),
    "day_level_ok": ("day", "level", "ok"),
}

# name -> (filter, whether it is exact: the aggregate must then be pushed)
LOG_FILTERS: dict[str, tuple[Callable[[], Column | None], bool]] = {
    "none": (lambda: None, True),
    "level_error": (lambda: F.col("level") == "ERROR", True),
    "status_range": (lambda: (F.col("status") >= 400) & (F.col("status") < 600), True),
    "host_null_or_warn": (lambda: F.col("host").isNull() | (F.col("level") == "WARN"), True),
    "nothing_matches": (lambda: F.col("status") > 100000, True),
    "text_contains": (lambda: F.col("message").contains("failed"), False),
}


@pytest.fixture(scope="module")
def log_tables(
    spark: SparkSession, logs_table: str, logs_parquet: DataFrame
) -> tuple[DataFrame, DataFrame, int]:
    return read_table(spark, logs_table), logs_parquet, len(split_files(logs_table))


@pytest.mark.parametrize("filter_name", sorted(LOG_FILTERS))
@pytest.mark.parametrize("group_name", sorted(LOG_GROUPS))
def test_log_aggregates_match_parquet(
    log_tables: tuple[DataFrame, DataFrame, int], group_name: str, filter_name: str
) -> None:
    table, parquet, splits = log_tables
    groups = LOG_GROUPS[group_name]
    make_filter, exact = LOG_FILTERS[filter_name]

    def q(d: DataFrame) -> DataFrame:
        cond = make_filter()
        filtered = d if cond is None else d.filter(cond)
        return filtered.groupBy(*groups).agg(*(m() for m in LOG_METRICS))

    expected = _parquet_answer(("log", group_name, filter_name), q(parquet))
    ran = q(table)
    _assert_same_rows((ran.schema, ran.collect()), expected)
    line = scan_node(ran)
    if exact:
        assert f"PushedGroupBy: [{', '.join(groups)}]" in line, line
        assert "SUM(status)" in line and "MIN(day)" in line, line
        assert _shipped_rows(ran) <= splits * max(1, len(expected[1]))
    else:
        assert "PushedAggregation" not in line, line


def test_timestamp_min_max_stays_with_spark(log_tables: tuple[DataFrame, DataFrame, int]) -> None:
    # Fast fields hold timestamps to the second: MIN/MAX from them would drop the microseconds
    # (only the log's statistics answer them, without data groups or data filters).
    table, parquet, _ = log_tables

    def q(d: DataFrame) -> DataFrame:
        return d.groupBy("level").agg(F.min("ts").alias("lo"), F.max("ts").alias("hi"))

    assert "PushedAggregation" not in scan_node(q(table))
    assert_same_aggregates(q(table), q(parquet))


# ---------------------------------------------------------------------------------------------
# A typed table: several splits, a partition column, NULLs everywhere, NaN, large longs

TYPED_SCHEMA = "g string, i int, l long, big long, d double, f float, dt date, b boolean, p string"


def _typed_rows() -> list[tuple[Any, ...]]:
    import datetime as dt

    rows = []
    for k in range(6000):
        rows.append(
            (
                None if k % 11 == 0 else f"g{k % 7}",
                None if k % 13 == 0 else (k * 7919) % 20011 - 10000,
                None if k % 17 == 0 else (k * 1000003) - 3_000_000_000,
                # Large enough that a split's double sum would not be exact: SUM falls back.
                2**61 + k if k % 2 == 0 else None,
                float("nan") if k == 4321 else (None if k % 19 == 0 else k / 8.0 - 300.0),
                None if k % 23 == 0 else float(k % 50) / 4.0,
                None if k % 29 == 0 else dt.date(2024, 1, 1) + dt.timedelta(days=k % 40),
                None if k % 31 == 0 else k % 3 == 0,
                "a" if k < 2500 else ("b" if k < 5000 else None),
            )
        )
    return rows


@pytest.fixture(scope="module")
def typed_tables(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> tuple[DataFrame, DataFrame, int]:
    source = spark.createDataFrame(_typed_rows(), TYPED_SCHEMA).repartition(3)
    base = tmp_path_factory.mktemp("typed_aggs")
    write_table(
        source,
        str(base / "table"),
        partition_by=("p",),
        options={"spark.indextables.maxRowsPerSplit": "700"},
    )
    parquet = _parquet(spark, source, str(base / "parquet"))
    return read_table(spark, str(base / "table")), parquet, len(split_files(str(base / "table")))


TYPED_METRICS: list[Callable[[], Column]] = [
    lambda: F.count(F.lit(1)).alias("n"),
    lambda: F.count("l").alias("n_l"),
    lambda: F.sum("i").alias("sum_i"),
    lambda: F.sum("l").alias("sum_l"),
    lambda: F.avg("i").alias("avg_i"),
    lambda: F.min("l").alias("min_l"),
    lambda: F.max("i").alias("max_i"),
    lambda: F.sum("f").alias("sum_f"),
    lambda: F.min("f").alias("min_f"),
    lambda: F.max("dt").alias("max_dt"),
    lambda: F.count("b").alias("n_b"),
]

TYPED_GROUPS: dict[str, tuple[str, ...]] = {
    "none": (),
    "partition": ("p",),
    "string": ("g",),
    "int": ("i",),
    "long": ("l",),
    "bool_date": ("b", "dt"),
    "partition_string_bool": ("p", "g", "b"),
}

TYPED_FILTERS: dict[str, Callable[[], Column | None]] = {
    "none": lambda: None,
    "partition": lambda: F.col("p") == "a",
    "int_range": lambda: (F.col("i") > -5000) & (F.col("i") <= 2000),
    "partition_and_string": lambda: (F.col("p") == "b") & F.col("g").isin("g1", "g2"),
}


@pytest.mark.parametrize("filter_name", sorted(TYPED_FILTERS))
@pytest.mark.parametrize("group_name", sorted(TYPED_GROUPS))
def test_typed_aggregates_match_parquet(
    typed_tables: tuple[DataFrame, DataFrame, int], group_name: str, filter_name: str
) -> None:
    table, parquet, splits = typed_tables
    groups = TYPED_GROUPS[group_name]

    def q(d: DataFrame) -> DataFrame:
        cond = TYPED_FILTERS[filter_name]()
        filtered = d if cond is None else d.filter(cond)
        return filtered.groupBy(*groups).agg(*(m() for m in TYPED_METRICS))

    expected = _parquet_answer(("typed", group_name, filter_name), q(parquet))
    ran = q(table)
    _assert_same_rows((ran.schema, ran.collect()), expected)
    line = scan_node(ran)
    assert f"PushedGroupBy: [{', '.join(groups)}]" in line, line
    assert _shipped_rows(ran) <= splits * max(1, len(expected[1]))


@pytest.mark.parametrize(
    "make_agg",
    [
        lambda: F.sum("big"),  # a split's sum of longs beyond 2^53 is not an exact double
        lambda: F.max("big"),
        lambda: F.min("d"),  # d holds a NaN: still exact (the split aggregates its rows)
        lambda: F.sum("d"),
        lambda: F.countDistinct("g"),
        lambda: F.max("g"),  # tantivy4java 0.31.0 has no string min/max
    ],
    ids=["sum_big", "max_big", "min_nan", "sum_nan", "count_distinct", "max_string"],
)
def test_aggregates_the_splits_cannot_answer_exactly_are_still_right(
    typed_tables: tuple[DataFrame, DataFrame, int], make_agg: Callable[[], Column]
) -> None:
    table, parquet, _ = typed_tables

    def q(d: DataFrame) -> DataFrame:
        return d.groupBy("p").agg(make_agg().alias("v"))

    assert_same_aggregates(q(table), q(parquet))


def test_group_with_more_values_than_a_terms_list_is_exact(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # 24,000 distinct keys in one split: more than one terms aggregation returns, so the split
    # aggregates its rows itself; sums and NULL keys included.
    rows = [(None if i % 97 == 0 else f"key-{i % 24000:05d}", i, i % 5) for i in range(30000)]
    source = spark.createDataFrame(rows, "k string, v long, w int").coalesce(1)
    base = tmp_path_factory.mktemp("agg_many_metrics")
    write_table(source, str(base / "table"))
    table = read_table(spark, str(base / "table"))
    parquet = _parquet(spark, source, str(base / "parquet"))

    def q(d: DataFrame) -> DataFrame:
        return (
            d.filter(F.col("v") >= 10)
            .groupBy("k", "w")
            .agg(F.count("*").alias("n"), F.sum("v").alias("s"), F.max("v").alias("m"))
        )

    assert "PushedGroupBy: [k, w]" in scan_node(q(table))
    assert_same_aggregates(q(table), q(parquet))


def test_null_keys_beside_empty_and_nul_leading_strings(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # A split buckets NULL keys under tantivy's `missing` key NUL only where the log's minimum
    # proves no value can be NUL or empty: here one split holds "" and one a NUL-leading
    # value (both must still count apart from NULL), and the others take the shortcut.
    rows = []
    for i in range(4000):
        split = i // 1000
        if i % 9 == 0:
            s = None
        elif split == 1 and i % 9 == 1:
            s = ""
        elif split == 2 and i % 9 == 1:
            s = "\u0000"
        elif split == 2 and i % 9 == 2:
            s = "\u0000x"
        else:
            s = f"s{i % 4}"
        rows.append((split, s, None if i % 7 == 0 else i % 5, i))
    source = spark.createDataFrame(rows, "part int, s string, n int, v long")
    base = tmp_path_factory.mktemp("agg_null_keys")
    for k in range(4):  # one append, one split, each
        write_table(source.filter(F.col("part") == k).coalesce(1), str(base / "table"), "append")
    assert len(split_files(str(base / "table"))) == 4
    table = read_table(spark, str(base / "table"))
    parquet = _parquet(spark, source, str(base / "parquet"))
    queries: list[Query] = [
        lambda d: d.groupBy("s").agg(F.count("*").alias("n"), F.sum("v").alias("sv")),
        lambda d: d.groupBy("s", "n").agg(F.count("*").alias("c"), F.max("v").alias("m")),
        lambda d: d.filter(F.col("v") > 1500).groupBy("n", "s").agg(F.avg("v").alias("a")),
        lambda d: d.filter(F.col("n").isNotNull()).groupBy("n").agg(F.count("*").alias("c")),
    ]
    for make in queries:
        assert "PushedGroupBy" in scan_node(make(table))
        assert_same_aggregates(make(table), make(parquet))


# ---------------------------------------------------------------------------------------------
# Bucket functions (indextables_histogram, indextables_date_histogram, indextables_range) as
# GROUP BY keys: Spark evaluates the same functions over the Parquet copy, so a pushed answer
# must give exactly the buckets Spark gives, NULL values included, and no empty bucket.

BUCKETS: dict[str, Callable[[], Column]] = {
    "hist_latency": lambda: itf.indextables_histogram("latency_ms", 50.0),
    "hist_status_offset": lambda: itf.indextables_histogram("status", 100, offset=7),
    "hist_fraction": lambda: itf.indextables_histogram("latency_ms", 0.3, offset=-0.1),
    "date_hour": lambda: itf.indextables_date_histogram("ts", "1h"),
    "date_day_offset": lambda: itf.indextables_date_histogram("ts", "1d", "6h"),
    "date_30m_negative_offset": lambda: itf.indextables_date_histogram("ts", "30m", "-7m"),
    "range_status": lambda: itf.indextables_range(
        "status", [("ok", None, 300), ("redirect", 300, 400), ("server", 500, None)]
    ),
    "range_latency": lambda: itf.indextables_range(
        "latency_ms", [("fast", None, 100.0), ("mid", 100.0, 250.5), ("slow", 1000, None)]
    ),
}

BUCKET_METRICS: list[Callable[[], Column]] = [
    lambda: F.count(F.lit(1)).alias("n"),
    lambda: F.sum("status").alias("sum_status"),
    lambda: F.avg("latency_ms").alias("avg_latency"),
    lambda: F.min("status").alias("min_status"),
    lambda: F.max("latency_ms").alias("max_latency"),
    lambda: F.count("ok").alias("n_ok"),
]

BUCKET_GROUPS: dict[str, Callable[[Column], list[Column]]] = {
    "alone": lambda b: [b.alias("bucket")],
    "with_level": lambda b: [F.col("level"), b.alias("bucket")],
    "then_day_host": lambda b: [b.alias("bucket"), F.col("day"), F.col("host")],
}

BUCKET_FILTERS: dict[str, tuple[Callable[[], Column | None], bool]] = {
    "none": (lambda: None, True),
    "level_error": (lambda: F.col("level") == "ERROR", True),
    "host_null_or_warn": (lambda: F.col("host").isNull() | (F.col("level") == "WARN"), True),
    "text_contains": (lambda: F.col("message").contains("failed"), False),
}


# Every bucket function beside every grouping, filter and metric list, and each of those beside
# each other, at least once (helpers.pairwise): 32 of the 192 cases of the cross product.
BUCKET_CASES = pairwise(
    sorted(BUCKETS), sorted(BUCKET_GROUPS), sorted(BUCKET_FILTERS), [True, False]
)


@pytest.mark.parametrize(
    ("bucket_name", "group_name", "filter_name", "count_only"),
    BUCKET_CASES,
    ids=[f"{b}-{g}-{f}-{'count' if c else 'metrics'}" for b, g, f, c in BUCKET_CASES],
)
def test_bucket_aggregates_match_parquet(
    log_tables: tuple[DataFrame, DataFrame, int],
    bucket_name: str,
    group_name: str,
    filter_name: str,
    count_only: bool,
) -> None:
    table, parquet, splits = log_tables
    make_filter, exact = BUCKET_FILTERS[filter_name]
    metrics = BUCKET_METRICS[:1] if count_only else BUCKET_METRICS

    def q(d: DataFrame) -> DataFrame:
        cond = make_filter()
        filtered = d if cond is None else d.filter(cond)
        keys = BUCKET_GROUPS[group_name](BUCKETS[bucket_name]())
        return filtered.groupBy(*keys).agg(*(m() for m in metrics))

    key = ("bucket", bucket_name, group_name, filter_name, str(count_only))
    expected = _parquet_answer(key, q(parquet))
    ran = q(table)
    _assert_same_rows((ran.schema, ran.collect()), expected)
    line = scan_node(ran)
    # tantivy4java 0.31.0 nests nothing under a range aggregation: only its COUNT(*) is pushed.
    pushable = exact and (count_only or not bucket_name.startswith("range"))
    if pushable:
        function = {"hist": "histogram", "date": "date_histogram", "range": "range"}[
            bucket_name.split("_")[0]
        ]
        assert "PushedGroupBy: [" in line and f"indextables_{function}(" in line, line
        groups = len(expected[1])
        assert _shipped_rows(ran) <= splits * max(1, groups) * (
            # a range's gap buckets and its NULLs are all the NULL key
            3 if bucket_name.startswith("range") else 1
        )
    else:
        assert "PushedAggregation" not in line, line


def test_bucket_keys_leave_no_empty_bucket_and_keep_nulls(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Two clusters far apart: tantivy's histogram would fill the gap with empty buckets; NULLs
    # form their own group, as in Spark.
    rows = [(float(v), v) for v in (1, 2, 3, 10_000, 10_001)] + [(None, None)] * 3
    source = spark.createDataFrame(rows, "x double, i long").coalesce(1)
    base = tmp_path_factory.mktemp("bucket_gaps")
    write_table(source, str(base / "table"))
    table = read_table(spark, str(base / "table"))
    parquet = _parquet(spark, source, str(base / "parquet"))

    def q(d: DataFrame) -> DataFrame:
        return d.groupBy(itf.indextables_histogram("x", 2.0).alias("b")).agg(
            F.count("*").alias("n"), F.sum("i").alias("s")
        )

    assert "PushedGroupBy: [indextables_histogram(x, 2.0, 0.0)]" in scan_node(q(table))
    assert_same_aggregates(q(table), q(parquet))
    assert sorted((r.b, r.n) for r in q(table).collect() if r.b is not None) == [
        (0.0, 1),
        (2.0, 2),
        (10000.0, 2),
    ]
    assert [r.n for r in q(table).collect() if r.b is None] == [3]


def test_date_histogram_before_1970_and_in_another_time_zone(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    import datetime as dt

    utc = dt.timezone.utc
    stamps = [
        dt.datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=utc),
        dt.datetime(1969, 12, 31, 22, 0, 0, tzinfo=utc),
        dt.datetime(1970, 1, 1, 0, 0, 0, tzinfo=utc),
        dt.datetime(2024, 3, 1, 5, 30, 0, 250000, tzinfo=utc),
        None,
    ]
    base = tmp_path_factory.mktemp("bucket_dates")
    before = spark.conf.get("spark.sql.session.timeZone") or "UTC"
    try:
        spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
        source = spark.createDataFrame([(t, k) for k, t in enumerate(stamps)], "t timestamp, k int")
        write_table(source.coalesce(1), str(base / "old"))
        write_table(
            source.filter(F.col("t") >= F.lit("1970-01-01 00:00:00+00:00")).coalesce(1),
            str(base / "new"),
        )
        for name, src in (
            ("old", source),
            ("new", source.filter(F.col("t") >= F.lit("1970-01-01 00:00:00+00:00"))),
        ):
            table = read_table(spark, str(base / name))
            parquet = _parquet(spark, src, str(base / f"{name}_parquet"))

            def q(d: DataFrame) -> DataFrame:
                return d.groupBy(itf.indextables_date_histogram("t", "1h").alias("h")).agg(
                    F.count("*").alias("n"), F.sum("k").alias("s")
                )

            assert_same_aggregates(q(table), q(parquet))
            # Buckets start at whole UTC hours whatever the session's time zone.
            hours = [r.h for r in q(table).collect() if r.h is not None]
            assert hours and all(h.timestamp() % 3600 == 0 for h in hours), hours
            line = scan_node(q(table))
            # Before 1970 tantivy's second-truncated timestamps would move across a boundary:
            # Spark aggregates those rows itself.
            assert ("PushedAggregation" in line) == (name == "new"), line
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.parametrize(
    "call",
    [
        "indextables_histogram(x, 0)",
        "indextables_histogram(x, 'a')",
        "indextables_histogram(s, 1)",
        "indextables_histogram(x, 1, 0, 5)",
        "indextables_date_histogram(x, '1h')",
        "indextables_date_histogram(t, '1w')",
        "indextables_date_histogram(t, x)",
        "indextables_range(x, 'a', 1, 2, 'b')",
        "indextables_range(x, 'a', 1, 5, 'b', 3, 9)",
        "indextables_range(x, 'a', NULL, NULL)",
        "indextables_range(x, 'a', 1, 2, 'a', 2, 3)",
    ],
)
def test_bad_bucket_arguments_are_named(spark: SparkSession, call: str) -> None:
    df = spark.createDataFrame([(1.0, "s", None)], "x double, s string, t timestamp")
    with pytest.raises(Exception) as info:
        df.select(F.expr(call)).collect()
    text = error_text(info.value)
    assert "INDEXTABLES_BUCKET_FUNCTION_ARGUMENTS" in text, text
    assert call.split("(")[0] in text, text
