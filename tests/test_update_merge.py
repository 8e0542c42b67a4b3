"""UPDATE and MERGE INTO through deletion vectors and new splits, on both layouts: each answer
equals the same change applied to a Parquet copy by plain Spark, updated rows' old versions are
gone from every route, and Spark's own errors hold (a source row matching a target row twice, a
non-deterministic condition)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import (
    assert_same_rows,
    error_text,
    jvm,
    plan_nodes,
    read_table,
    split_files,
    write_table,
)

pytestmark = pytest.mark.usefixtures("layout")


def _rows(spark: SparkSession) -> DataFrame:
    return spark.range(0, 1200).select(
        F.col("id"),
        F.concat(F.lit("user"), (F.col("id") % 23).cast("string")).alias("user"),
        F.concat(
            F.lit("request from 10.0.0."),
            (F.col("id") % 7).cast("string"),
            F.when(F.col("id") % 40 == 0, F.lit(" timeout")).otherwise(F.lit(" ok")),
        ).alias("msg"),
        (F.col("id") % 50).cast("int").alias("n"),
        F.element_at(F.array(F.lit("eu"), F.lit("us")), (F.col("id") % 2 + 1).cast("int")).alias(
            "region"
        ),
    )


@pytest.fixture
def table(spark: SparkSession, tmp_path: Path) -> str:
    """1200 rows in 3 appends, partitioned by region."""
    path = str(tmp_path / "table")
    rows = _rows(spark)
    for k in range(3):
        write_table(
            rows.where(F.col("id") % 3 == k),
            path,
            mode="append",
            partition_by=("region",),
            options={"spark.indextables.indexing.typemap.msg": "text"},
        )
    return path


def _name(path: str) -> str:
    return f"indextables.`{path}`"


def test_update_by_predicate_and_by_indexquery_matches_spark(
    spark: SparkSession, table: str
) -> None:
    expected = _rows(spark)
    files_before = set(split_files(table))
    (updated,) = spark.sql(
        f"UPDATE {_name(table)} SET user = 'anon', n = n + 1000 WHERE user = 'user1'"
    ).collect()
    assert updated.num_affected_rows == expected.where("user = 'user1'").count()
    expected = expected.withColumn(
        "n", F.when(F.col("user") == "user1", F.col("n") + 1000).otherwise(F.col("n"))
    ).withColumn("user", F.when(F.col("user") == "user1", F.lit("anon")).otherwise(F.col("user")))
    assert_same_rows(read_table(spark, table), expected)

    spark.sql(f"UPDATE {_name(table)} SET msg = 'redacted' WHERE msg indexquery 'timeout'")
    expected = expected.withColumn(
        "msg", F.when(F.col("msg").contains("timeout"), F.lit("redacted")).otherwise(F.col("msg"))
    )
    result = read_table(spark, table)
    assert_same_rows(result, expected)
    # Old versions of updated rows are gone from searches and pushed aggregates too.
    assert result.where("msg indexquery 'timeout'").count() == 0
    assert result.where("user = 'user1'").count() == 0
    assert_same_rows(
        result.groupBy("region").agg(F.count("*"), F.sum("n")),
        expected.groupBy("region").agg(F.count("*"), F.sum("n")),
    )
    # The old splits stay (with vectors); updated rows went to new ones.
    files_after = set(split_files(table))
    assert files_before < files_after
    (history,) = spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{table}'").limit(1).collect()
    assert history.operation == "UPDATE"


def test_merge_into_with_every_clause_matches_spark(spark: SparkSession, table: str) -> None:
    target = _rows(spark)
    # 100 source rows: ids 1150..1249, half matching existing rows, half new.
    source = spark.range(1150, 1250).select(
        F.col("id"),
        F.lit("merged").alias("user"),
        F.concat(F.lit("merged row "), F.col("id").cast("string")).alias("msg"),
        (F.col("id") % 5).cast("int").alias("n"),
        F.when(F.col("id") % 2 == 0, F.lit("eu")).otherwise(F.lit("us")).alias("region"),
    )
    source.createOrReplaceTempView("src")
    (counts,) = spark.sql(
        f"""MERGE INTO {_name(table)} t USING src s ON t.id = s.id
        WHEN MATCHED AND s.n = 0 THEN DELETE
        WHEN MATCHED THEN UPDATE SET *
        WHEN NOT MATCHED THEN INSERT *
        WHEN NOT MATCHED BY SOURCE AND t.n = 49 THEN DELETE
        WHEN NOT MATCHED BY SOURCE AND t.n = 48 THEN UPDATE SET user = 'stale'"""
    ).collect()
    matched = source.join(target.select("id"), "id")
    kept_target = target.join(source.select("id"), "id", "left_anti")
    expected = (
        kept_target.where("n != 49")
        .withColumn("user", F.when(F.col("n") == 48, F.lit("stale")).otherwise(F.col("user")))
        .unionByName(matched.where("n != 0"))
        .unionByName(source.join(target.select("id"), "id", "left_anti"))
    )
    assert_same_rows(read_table(spark, table), expected)
    deleted = matched.where("n = 0").count() + kept_target.where("n = 49").count()
    updated = matched.where("n != 0").count() + kept_target.where("n = 48").count()
    inserted = source.join(target.select("id"), "id", "left_anti").count()
    assert counts.asDict() == {
        "num_affected_rows": deleted + updated + inserted,
        "num_updated_rows": updated,
        "num_deleted_rows": deleted,
        "num_inserted_rows": inserted,
    }
    assert_same_rows(
        read_table(spark, table).where("msg indexquery 'merged'").select("id"),
        expected.where("msg LIKE '%merged%'").select("id"),
    )
    (history,) = spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{table}'").limit(1).collect()
    assert history.operation == "MERGE"


def _target_rows_read(statement: DataFrame) -> int:
    """Rows the statement's scans of the table shipped to Spark (numOutputRows), from the plan
    the eagerly run statement executed."""
    executed = statement._jdf.queryExecution().executedPlan()
    scans = [n for n in plan_nodes(executed) if n.getClass().getSimpleName() == "BatchScanExec"]
    assert scans, f"no scan in the executed plan:\n{executed}"
    return sum(int(n.metrics().get("numOutputRows").get().value()) for n in scans)


def test_a_merge_reads_only_the_target_rows_its_source_keys_name(
    spark: SparkSession, table: str
) -> None:
    """The source's keys narrow the target scan when the job starts (a runtime filter): a MERGE
    reads the matching rows, not the table, and changes what it would have."""
    target = _rows(spark)
    source = spark.range(1150, 1250).select(
        F.col("id"),
        F.lit("merged").alias("user"),
        F.lit("merged row").alias("msg"),
        F.lit(7).alias("n"),
        F.lit("eu").alias("region"),
    )
    source.createOrReplaceTempView("src")
    statement = (
        f"MERGE INTO {_name(table)} t USING src s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    plan = "\n".join(r[0] for r in spark.sql(f"EXPLAIN {statement}").collect())
    assert "RuntimeFilters: [dynamicpruningexpression(id#" in plan, plan
    narrowed = jvm(spark).io.indextables.spark.read.RuntimeFiltering.narrowed()
    result = spark.sql(statement)
    assert jvm(spark).io.indextables.spark.read.RuntimeFiltering.narrowed() > narrowed
    # 50 of the 100 source ids are in the table: only their rows are read (was 1200).
    assert _target_rows_read(result) == 50
    assert result.collect()[0].asDict() == {
        "num_affected_rows": 100,
        "num_updated_rows": 50,
        "num_deleted_rows": 0,
        "num_inserted_rows": 50,
    }
    expected = target.join(source.select("id"), "id", "left_anti").unionByName(source)
    assert_same_rows(read_table(spark, table), expected)

    # A DELETE whose condition is a subquery is a semi-join: narrowed the same way.
    spark.range(0, 1200, 100).createOrReplaceTempView("gone")
    deletion = spark.sql(f"DELETE FROM {_name(table)} WHERE id IN (SELECT id FROM gone)")
    assert _target_rows_read(deletion) == 12
    assert_same_rows(read_table(spark, table), expected.where("id % 100 != 0 OR id >= 1200"))


def test_a_merge_that_must_see_unmatched_target_rows_reads_them_all(
    spark: SparkSession, table: str
) -> None:
    """WHEN NOT MATCHED BY SOURCE changes rows the source does not name: no runtime filter."""
    spark.range(1150, 1250).select("id").createOrReplaceTempView("src")
    statement = (
        f"MERGE INTO {_name(table)} t USING src s ON t.id = s.id "
        "WHEN NOT MATCHED BY SOURCE AND t.n = 49 THEN DELETE"
    )
    plan = "\n".join(r[0] for r in spark.sql(f"EXPLAIN {statement}").collect())
    assert "dynamicpruning" not in plan, plan
    result = spark.sql(statement)
    assert _target_rows_read(result) == 1200
    assert_same_rows(read_table(spark, table), _rows(spark).where("n != 49 OR id >= 1150"))


def test_merge_whose_source_matches_a_row_twice_fails_and_changes_nothing(
    spark: SparkSession, table: str
) -> None:
    spark.createDataFrame([(5, "a"), (5, "b")], "id long, user string").createOrReplaceTempView(
        "dup"
    )
    with pytest.raises(Exception) as failure:
        spark.sql(
            f"MERGE INTO {_name(table)} t USING dup s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET user = s.user"
        ).collect()
    assert "MERGE_CARDINALITY_VIOLATION" in error_text(failure.value)
    assert_same_rows(read_table(spark, table), _rows(spark))


@pytest.mark.parametrize(
    ("statement", "error"),
    [
        ("DELETE FROM {t} WHERE rand() < 0.5", "INVALID_NON_DETERMINISTIC_EXPRESSIONS"),
        ("UPDATE {t} SET user = 'x' WHERE rand() < 0.5", "INVALID_NON_DETERMINISTIC_EXPRESSIONS"),
        (
            "MERGE INTO {t} t USING (SELECT 5L AS id) s ON t.id = s.id AND rand() < 0.5 "
            "WHEN MATCHED THEN DELETE",
            "UNSUPPORTED_MERGE_CONDITION.NON_DETERMINISTIC",
        ),
    ],
)
def test_a_non_deterministic_condition_fails_with_sparks_error_and_changes_nothing(
    spark: SparkSession, table: str, statement: str, error: str
) -> None:
    versions = len(spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{table}'").collect())
    with pytest.raises(Exception) as failure:
        spark.sql(statement.format(t=_name(table))).collect()
    assert error in error_text(failure.value)
    assert len(spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{table}'").collect()) == versions
    assert_same_rows(read_table(spark, table), _rows(spark))


def test_the_issues_statements_on_a_catalog_table(spark: SparkSession) -> None:
    spark.sql("DROP TABLE IF EXISTS ux")
    spark.sql(
        "CREATE TABLE ux (id BIGINT, user STRING, msg STRING) USING indextables"
        " TBLPROPERTIES ('spark.indextables.indexing.typemap.msg'='text')"
    )
    try:
        spark.sql(
            "INSERT INTO ux VALUES (1, 'user1', 'from 10.0.0.1'), (2, 'user2', 'from 10.0.0.2'),"
            " (3, 'user3', 'from 10.0.0.3')"
        )
        spark.sql("UPDATE ux SET user = 'anon' WHERE user = 'user1'")
        spark.createDataFrame(
            [(2, "user2b", "changed"), (4, "user4", "new")], "id long, user string, msg string"
        ).createOrReplaceTempView("src")
        spark.sql(
            "MERGE INTO ux t USING src s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
        )
        rows = sorted((r.id, r.user, r.msg) for r in spark.table("ux").collect())
        assert rows == [
            (1, "anon", "from 10.0.0.1"),
            (2, "user2b", "changed"),
            (3, "user3", "from 10.0.0.3"),
            (4, "user4", "new"),
        ]
    finally:
        spark.sql("DROP TABLE IF EXISTS ux")
