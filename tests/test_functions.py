"""`indextables.functions`: IndexQuery predicates as Columns, against SQL and a Parquet oracle.

Each Column predicate is run three ways on the same rows: as a DataFrame filter on the
IndexTables table, as the SQL operator on the same table, and as the equivalent plain Spark
predicate on a Parquet copy (text is tokenized as tantivy's `default` tokenizer does for ASCII:
split at non-alphanumerics, lower-cased, so a term is a regex over the lower-cased text). All
three must return the same rows, and the filter must be pushed as the SQL form is (the scan's
`PushedIndexQuery`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import TYPEMAP, assert_same_rows, read_table, scan_node, write_table
from indextables import InvalidQueryError
from indextables.functions import fieldmatch, indexquery, indexquery_all, textsearch

pytestmark = pytest.mark.usefixtures("layout")

WORDS = ["timeout", "connection", "reset", "disk", "full", "peer", "retry", "lock", "socket"]
LEVELS = ["ERROR", "WARN", "INFO", None]


def _rows(n: int) -> list[tuple[int, str | None, str, str | None]]:
    rng = random.Random(11)
    rows = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
        message = None if i % 19 == 0 else rng.choice([" ", ", ", "-"]).join(words)
        if message and i % 5 == 0:
            message = message.upper()
        rows.append((i, LEVELS[i % 4], rng.choice(["disk", "net", "auth"]), message))
    return rows


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, DataFrame]:
    root: Path = tmp_path_factory.mktemp("functions")
    df = spark.createDataFrame(
        _rows(900), "id long, level string, component string, message string"
    ).repartition(3)
    write_table(df, str(root / "it"), options={TYPEMAP + "message": "text"})
    df.write.parquet(str(root / "parquet"))
    read_table(spark, str(root / "it")).createOrReplaceTempView("fn_logs")
    return {
        "it": read_table(spark, str(root / "it")),
        "parquet": spark.read.parquet(str(root / "parquet")),
    }


def _term(word: str) -> Column:
    """Oracle: the message holds the token `word` (tantivy's default tokenizer, ASCII)."""
    pattern = f"(^|[^a-z0-9]){re.escape(word)}([^a-z0-9]|$)"
    return F.coalesce(F.lower(F.col("message")).rlike(pattern), F.lit(False))


def _pushed(df: DataFrame) -> str:
    scan = scan_node(df)
    match = re.search(r"PushedIndexQuery: \[(.*?)\](, |$)", scan)
    assert match, f"no PushedIndexQuery in the scan: {scan}"
    return match.group(1)


CASES: list[tuple[Callable[[], Column], str, Callable[[], Column]]] = [
    # (Column over the IndexTables table, SQL WHERE clause, oracle over the Parquet copy)
    (
        lambda: indexquery("message", "timeout OR reset"),
        "message indexquery 'timeout OR reset'",
        lambda: _term("timeout") | _term("reset"),
    ),
    (
        lambda: indexquery(F.col("message"), "disk AND NOT lock"),
        "message indexquery 'disk AND NOT lock'",
        lambda: _term("disk") & ~_term("lock"),
    ),
    (
        lambda: textsearch("message", "peer"),
        "message textsearch 'peer'",
        lambda: _term("peer"),
    ),
    (
        lambda: fieldmatch("level", "ERROR"),
        "level fieldmatch 'ERROR'",
        lambda: F.coalesce(F.col("level") == "ERROR", F.lit(False)),
    ),
    (
        lambda: indexquery("message", "socket") & (F.col("level") == "WARN"),
        "message indexquery 'socket' AND level = 'WARN'",
        lambda: _term("socket") & (F.col("level") == "WARN"),
    ),
    (
        lambda: indexquery("message", "socket") | (F.col("component") == "auth"),
        "message indexquery 'socket' OR component = 'auth'",
        lambda: _term("socket") | (F.col("component") == "auth"),
    ),
    (
        lambda: ~(indexquery("message", "retry") | (F.col("level") == "INFO")),
        "NOT (message indexquery 'retry' OR level = 'INFO')",
        lambda: ~(_term("retry") | (F.col("level") == "INFO")),
    ),
    (
        lambda: ~textsearch("message", "full") & fieldmatch("component", "net"),
        "NOT message textsearch 'full' AND component fieldmatch 'net'",
        lambda: ~_term("full") & (F.col("component") == "net"),
    ),
    (
        lambda: indexquery_all("connection"),
        "indexqueryall('connection')",
        lambda: _term("connection"),
    ),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_column_predicate_matches_sql_and_the_parquet_oracle(
    spark: SparkSession, tables: dict[str, DataFrame], case: int
) -> None:
    column, where, oracle = CASES[case]
    by_column = tables["it"].filter(column())
    by_sql = spark.sql(f"SELECT * FROM fn_logs WHERE {where}")
    expected = tables["parquet"].filter(oracle())
    assert expected.count() > 0, where
    assert_same_rows(by_column, expected)
    assert_same_rows(by_sql, expected)
    # The same expression as SQL's, pushed into the scan as one native query.
    assert _pushed(by_column) == _pushed(by_sql)


def test_a_column_predicate_feeds_a_pushed_count(
    spark: SparkSession, tables: dict[str, DataFrame]
) -> None:
    df = tables["it"].filter(indexquery("message", "lock")).groupBy().count()
    assert df.collect()[0][0] == tables["parquet"].filter(_term("lock")).count()
    assert "PushedAggregation: [COUNT(*)]" in scan_node(df)


def test_textsearch_on_an_exact_column_raises_invalid_query_error(
    tables: dict[str, DataFrame],
) -> None:
    with pytest.raises(InvalidQueryError) as info:
        tables["it"].filter(textsearch("level", "ERROR")).collect()
    assert info.value.error_class == "INDEXTABLES_INDEXQUERY_WRONG_FIELD_KIND"
    assert "level" in info.value.message


@pytest.mark.parametrize(
    "call",
    [
        lambda: indexquery("message", 3),  # type: ignore[arg-type]
        lambda: indexquery_all(None),  # type: ignore[arg-type]
        lambda: fieldmatch(42, "x"),  # type: ignore[arg-type]
    ],
)
def test_wrong_argument_types_raise_type_error_naming_the_function(call: object) -> None:
    with pytest.raises(TypeError, match=r"^(indexquery|indexquery_all|fieldmatch): "):
        call()  # type: ignore[operator]
