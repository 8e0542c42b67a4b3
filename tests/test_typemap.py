"""`spark.indextables.indexing.typemap.<col>`: string (exact), text (tokenized), json."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import TYPEMAP, assert_same_rows, read_table, write_table

pytestmark = pytest.mark.usefixtures("layout")

MESSAGES = [
    "error",
    "error message",
    "Error",
    "connection timeout after 30s",
    "Timeout while reading block blk_42",
    "timeouts keep happening",
    "read_timeout=5",
    "xtimeoutx",
    "time out",
    "",
    None,
    "request timed out: TIMEOUT",
    "Notification time out: 3200",
]


@pytest.fixture(scope="module")
def messages_df(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(list(enumerate(MESSAGES)), "id long, message string")


def test_string_is_the_default_and_matches_exactly(
    spark: SparkSession, messages_df: DataFrame, tmp_table: str
) -> None:
    write_table(messages_df, tmp_table)
    table = read_table(spark, tmp_table)
    for value in ["error", "Error", "time out", ""]:
        assert_same_rows(
            table.filter(F.col("message") == value), messages_df.filter(F.col("message") == value)
        )


def test_explicit_string_typemap_matches_exactly(
    spark: SparkSession, messages_df: DataFrame, tmp_table: str
) -> None:
    write_table(messages_df, tmp_table, options={TYPEMAP + "message": "string"})
    got = read_table(spark, tmp_table).filter(F.col("message") == "error")
    assert [r.id for r in got.collect()] == [0]


@pytest.fixture(scope="module")
def text_table(
    spark: SparkSession, messages_df: DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> DataFrame:
    path = str(tmp_path_factory.mktemp("text") / "table")
    write_table(messages_df, path, options={TYPEMAP + "message": "text"})
    return read_table(spark, path)


def test_text_column_round_trips_the_original_strings(
    text_table: DataFrame, messages_df: DataFrame
) -> None:
    assert_same_rows(text_table, messages_df)


@pytest.mark.parametrize(
    "needle", ["timeout", "Timeout", "TIMEOUT", "time out", "out", "eout a", "blk_42", "error"]
)
def test_text_column_contains_returns_what_spark_contains_returns(
    text_table: DataFrame, messages_df: DataFrame, needle: str
) -> None:
    cond = F.col("message").contains(needle)
    assert_same_rows(text_table.filter(cond), messages_df.filter(cond))


def test_text_column_equality_and_prefix_keep_spark_semantics(
    text_table: DataFrame, messages_df: DataFrame
) -> None:
    for cond in [
        F.col("message") == "error",
        F.col("message").startswith("Timeout while"),
        F.col("message").isNull(),
        ~F.col("message").contains("timeout"),
    ]:
        assert_same_rows(text_table.filter(cond), messages_df.filter(cond))


def test_json_column_round_trips_the_same_documents(spark: SparkSession, tmp_table: str) -> None:
    docs = [
        {"user": {"name": "ana", "id": 7}, "tags": ["a", "b"], "ok": True},
        {"user": {"name": "bo"}, "latency": 12.5},
        {},
    ]
    rows = [(i, json.dumps(d)) for i, d in enumerate(docs)] + [(len(docs), None)]
    df = spark.createDataFrame(rows, "id long, payload string")
    write_table(df, tmp_table, options={TYPEMAP + "payload": "json"})
    got = {r.id: r.payload for r in read_table(spark, tmp_table).collect()}
    assert set(got) == set(range(len(rows)))
    assert got[len(docs)] is None
    for i, doc in enumerate(docs):
        assert json.loads(got[i]) == doc


def test_text_search_finds_words_next_to_tokens_the_tokenizer_drops(
    spark: SparkSession, tmp_table: str
) -> None:
    """tantivy's default tokenizer drops tokens over 255 bytes; such splits are read without
    token queries, so a substring filter still finds every row (regression guard)."""
    long_run = "x" * 300
    rows = [
        (1, f"prefix{long_run}needle suffix"),  # 'needle' sits inside a dropped token
        (2, "a plain needle here"),
        (3, "nothing to see"),
    ]
    df = spark.createDataFrame(rows, "id long, message string")
    (
        df.write.format("indextables")
        .option("spark.indextables.indexing.typemap.message", "text")
        .mode("overwrite")
        .save(tmp_table)
    )
    table = spark.read.format("indextables").load(tmp_table)
    found = sorted(r.id for r in table.filter(F.col("message").contains("needle")).collect())
    assert found == [1, 2]
    assert sorted(r.id for r in table.filter(F.col("message") == "nothing to see").collect()) == [3]
