"""Hundreds of generated predicates give exactly the rows Parquet gives for the same data.

The IndexTables table (message typed as text) and the Parquet copy are written once per
session. Rows are compared as (id, xxhash64 of every column), so a filter that returns the right
ids with wrong values fails too.
"""

from __future__ import annotations

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import read_table
from predicates import Predicate, generate_predicates

pytestmark = pytest.mark.usefixtures("layout")

PREDICATE_COUNT = 300


@pytest.fixture(scope="module")
def predicates(spark: SparkSession, logs_rows: list[tuple[object, ...]]) -> list[Predicate]:
    # Columns need a running session, so predicates are built after the spark fixture.
    return generate_predicates(logs_rows, PREDICATE_COUNT, seed=7)


@pytest.fixture(scope="module")
def tables(
    spark: SparkSession, logs_table: str, logs_parquet: DataFrame
) -> tuple[DataFrame, DataFrame]:
    return read_table(spark, logs_table), logs_parquet


# Parquet's answer to each predicate, by index: computed once, not once per layout.
_PARQUET_ANSWERS: dict[int, dict[int, int]] = {}


def _fingerprints(df: DataFrame, columns: list[str]) -> dict[int, int]:
    rows = df.select("id", F.xxhash64(*columns).alias("h")).collect()
    return {r.id: r.h for r in rows}


def test_unfiltered_tables_are_identical(tables: tuple[DataFrame, DataFrame]) -> None:
    indextables_df, parquet_df = tables
    columns = parquet_df.columns
    assert _fingerprints(indextables_df, columns) == _fingerprints(parquet_df, columns)


# Every predicate on the splits layout, every other one on the companion layout (whose rows come
# from its Parquet files: 150 generated predicates check that reading; the query is the same).
@pytest.mark.companion_sample(2)
@pytest.mark.parametrize("index", range(PREDICATE_COUNT), ids=lambda i: f"p{i:03d}")
def test_filter_matches_parquet(
    tables: tuple[DataFrame, DataFrame], predicates: list[Predicate], index: int
) -> None:
    predicate = predicates[index]
    indextables_df, parquet_df = tables
    columns = parquet_df.columns
    actual = _fingerprints(indextables_df.filter(predicate.column), columns)
    if index not in _PARQUET_ANSWERS:
        _PARQUET_ANSWERS[index] = _fingerprints(parquet_df.filter(predicate.column), columns)
    expected = _PARQUET_ANSWERS[index]
    if actual == expected:
        return
    missing = sorted(set(expected) - set(actual))
    unexpected = sorted(set(actual) - set(expected))
    changed = sorted(i for i in set(actual) & set(expected) if actual[i] != expected[i])
    lines = [
        f"predicate: {predicate.description}",
        f"IndexTables returned {len(actual)} rows, Parquet {len(expected)}",
        f"missing ids (first 20 of {len(missing)}): {missing[:20]}",
        f"unexpected ids (first 20 of {len(unexpected)}): {unexpected[:20]}",
        f"ids with different values (first 20 of {len(changed)}): {changed[:20]}",
    ]
    sample = (missing + unexpected + changed)[:5]
    if sample:
        lines.append("Parquet rows for the first of those ids:")
        lines.extend(f"  {r}" for r in parquet_df.filter(F.col("id").isin(sample)).collect())
    raise AssertionError("\n".join(lines))
