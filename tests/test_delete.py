"""DELETE FROM through deletion vectors, on both layouts: the same rows go as from a Parquet copy
(by plain predicates and by `indexquery`), no split file is rewritten, every read route leaves
the deleted rows out, and time travel shows them again."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import (
    assert_same_rows,
    read_table,
    split_files,
    version_actions,
    write_table,
)

pytestmark = pytest.mark.usefixtures("layout")


def _rows(spark: SparkSession) -> DataFrame:
    return spark.range(0, 3000).select(
        F.col("id"),
        F.concat(F.lit("user"), (F.col("id") % 37).cast("string")).alias("user"),
        F.concat(
            F.lit("login from 10.0.0."),
            (F.col("id") % 9).cast("string"),
            F.when(F.col("id") % 50 == 0, F.lit(" failed")).otherwise(F.lit(" ok")),
        ).alias("msg"),
        (F.col("id") % 101).cast("int").alias("n"),
        F.element_at(F.array(F.lit("eu"), F.lit("us")), (F.col("id") % 2 + 1).cast("int")).alias(
            "region"
        ),
    )


@pytest.fixture
def tables(spark: SparkSession, tmp_path: Path) -> tuple[str, str]:
    """A table of 3000 rows in 6 appends (12 splits over 2 partitions), and a Parquet copy."""
    path = str(tmp_path / "table")
    parquet = str(tmp_path / "oracle.parquet")
    rows = _rows(spark)
    for k in range(6):
        write_table(
            rows.where(F.col("id") % 6 == k),
            path,
            mode="append",
            partition_by=("region",),
            options={"spark.indextables.indexing.typemap.msg": "text"},
        )
    rows.write.parquet(parquet)
    return path, parquet


def _table(spark: SparkSession, path: str) -> str:
    return f"indextables.`{path}`"


def test_delete_by_predicates_and_indexquery_matches_parquet(
    spark: SparkSession, tables: tuple[str, str]
) -> None:
    path, parquet = tables
    files_before = set(split_files(path))
    oracle = spark.read.parquet(parquet)
    steps = [
        ("user = 'user3'", "user = 'user3'"),
        ("msg indexquery 'failed' AND n > 40", "msg LIKE '%failed%' AND n > 40"),
        ("id < 25 OR n = 100", "id < 25 OR n = 100"),
        ("msg indexquery '\"10.0.0.7\"'", "msg LIKE '%10.0.0.7 %'"),
    ]
    for ours, twin in steps:
        expected_gone = oracle.where(twin).count()
        (result,) = spark.sql(f"DELETE FROM {_table(spark, path)} WHERE {ours}").collect()
        # The statement says how many rows it deleted, as Delta's does.
        assert result.asDict() == {"num_affected_rows": expected_gone}
        oracle = oracle.where(f"NOT coalesce({twin}, false)")
        assert expected_gone > 0
        assert_same_rows(read_table(spark, path), oracle)

    # No split was rewritten: the same files, and every deletion is a vector file beside them.
    assert set(split_files(path)) == files_before
    assert list(Path(path).rglob("*.dv"))
    table = read_table(spark, path)
    assert table.count() == oracle.count()
    for query in ("n > 50", "user = 'user5'", "msg indexquery 'failed'"):
        twin = query.replace("msg indexquery 'failed'", "msg LIKE '%failed%'")
        assert_same_rows(table.where(query), oracle.where(twin))
    # Pushed aggregates over splits with vectors leave the deleted rows out.
    grouped = table.groupBy("region").agg(F.count("*"), F.sum("n"), F.min("id"), F.max("n"))
    assert "PushedAggregation" in grouped._jdf.queryExecution().executedPlan().toString()
    assert_same_rows(
        grouped, oracle.groupBy("region").agg(F.count("*"), F.sum("n"), F.min("id"), F.max("n"))
    )
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    assert state.num_records == oracle.count()
    assert state.num_deleted_rows == 3000 - oracle.count()
    assert state.num_deletion_vectors > 0
    # Time travel to before the first DELETE shows every row again.
    v5 = spark.read.format("indextables").option("versionAsOf", 5).load(path)
    assert_same_rows(v5, spark.read.parquet(parquet))


def test_delete_commits_one_version_of_removes_and_re_adds(
    spark: SparkSession, tables: tuple[str, str]
) -> None:
    path, _ = tables
    spark.sql(f"DELETE FROM {_table(spark, path)} WHERE user = 'user11'")
    actions = version_actions(path, 6)
    protocol = [a["protocol"] for a in actions if "protocol" in a]
    assert protocol and "deletionVectors" in protocol[0]["readerFeatures"]
    removes = [a["remove"]["path"] for a in actions if "remove" in a]
    adds = [a["add"] for a in actions if "add" in a]
    assert sorted(removes) == sorted(a["path"] for a in adds) and len(adds) == 12
    assert all(a["deletionVector"]["storageType"] == "r" for a in adds)
    assert sum(a["deletionVector"]["cardinality"] for a in adds) == sum(
        1 for i in range(3000) if i % 37 == 11
    )
    (history,) = spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{path}'").limit(1).collect()
    assert history.operation == "DELETE"
    # A DELETE that matches nothing commits nothing.
    (none,) = spark.sql(f"DELETE FROM {_table(spark, path)} WHERE user = 'nobody'").collect()
    assert none.num_affected_rows == 0
    assert not (Path(path) / "_transaction_log" / f"{7:020d}.json").exists()


def test_delete_everything_and_a_whole_split(spark: SparkSession, tables: tuple[str, str]) -> None:
    path, parquet = tables
    # The first append's rows, all in region eu: its splits held exactly these rows.
    first = version_actions(path, 0)
    first_splits = {a["add"]["path"] for a in first if "add" in a}
    spark.sql(f"DELETE FROM {_table(spark, path)} WHERE region = 'eu' AND id % 6 = 0")
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    # Those splits are removed, not given vectors.
    assert state.num_files == 12 - len(first_splits) and state.num_deletion_vectors == 0
    live = {r.path for r in spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()}
    assert not live & first_splits
    assert_same_rows(
        read_table(spark, path),
        spark.read.parquet(parquet).where("NOT (region = 'eu' AND id % 6 = 0)"),
    )
    spark.sql(f"DELETE FROM {_table(spark, path)}")
    assert read_table(spark, path).count() == 0
    assert spark.sql(f"SELECT COUNT(*) FROM {_table(spark, path)}").collect()[0][0] == 0


def test_a_delete_of_whole_partitions_is_answered_by_the_log(
    spark: SparkSession, tables: tuple[str, str]
) -> None:
    path, parquet = tables
    name = _table(spark, path)
    eu_splits = {
        r.path
        for r in spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()
        if "region=eu" in r.path
    }
    # Spark runs it as a metadata-only delete (SupportsDeleteV2): no scan, no row-level write.
    plan = "\n".join(
        r[0] for r in spark.sql(f"EXPLAIN DELETE FROM {name} WHERE region = 'eu'").collect()
    )
    assert "DeleteFromTable" in plan and "WriteDelta" not in plan and "Scan" not in plan, plan
    (result,) = spark.sql(f"DELETE FROM {name} WHERE region = 'eu'").collect()
    assert result.num_affected_rows == 1500
    actions = version_actions(path, 6)
    assert {a["remove"]["path"] for a in actions if "remove" in a} == eu_splits
    assert not [a for a in actions if "add" in a or "protocol" in a]
    assert not list(Path(path).rglob("*.dv"))
    (history,) = spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{path}'").limit(1).collect()
    assert history.operation == "DELETE"
    assert_same_rows(read_table(spark, path), spark.read.parquet(parquet).where("region = 'us'"))
    # A condition on other columns too reads rows, through deletion vectors.
    plan = "\n".join(
        r[0]
        for r in spark.sql(f"EXPLAIN DELETE FROM {name} WHERE region = 'us' AND n > 90").collect()
    )
    assert "WriteDelta" in plan, plan
    (mixed,) = spark.sql(f"DELETE FROM {name} WHERE region = 'us' AND n > 90").collect()
    assert (
        mixed.num_affected_rows
        == spark.read.parquet(parquet).where("region = 'us' AND n > 90").count()
    )
    assert list(Path(path).rglob("*.dv"))
    # Without a WHERE clause every split goes, from the log.
    left = read_table(spark, path).count()
    (everything,) = spark.sql(f"DELETE FROM {name}").collect()
    assert everything.num_affected_rows == left
    assert read_table(spark, path).count() == 0


def test_delete_on_a_catalog_table(spark: SparkSession) -> None:
    spark.sql("DROP TABLE IF EXISTS ux")
    spark.sql(
        "CREATE TABLE ux (id BIGINT, user STRING, msg STRING) USING indextables"
        " TBLPROPERTIES ('spark.indextables.indexing.typemap.msg'='text')"
    )
    try:
        spark.sql(
            "INSERT INTO ux VALUES (1, 'user1', 'from 10.0.0.1'), (2, 'user2', 'from 10.0.0.2'),"
            " (3, 'user3', 'from 10.0.0.2'), (4, 'user1', 'from 10.0.0.4')"
        )
        spark.sql("DELETE FROM ux WHERE user = 'user1'")
        assert sorted(r.id for r in spark.table("ux").collect()) == [2, 3]
        spark.sql("DELETE FROM ux WHERE msg indexquery '10.0.0.2' AND id = 3")
        assert [r.id for r in spark.table("ux").collect()] == [2]
    finally:
        spark.sql("DROP TABLE IF EXISTS ux")
