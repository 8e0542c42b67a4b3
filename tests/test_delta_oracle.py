"""The Delta Lake oracle itself (tests/delta_oracle.py), before any statement of ours relies on it.

The same rows go to an IndexTables table (each layout) and to a Delta table with deletion
vectors, in two appends; both read back as those rows. Then a DELETE, an UPDATE and a MERGE INTO
run on a Delta table only (the plugin cannot run them yet; Delta's answers do not depend on our
layout, so once): each affected-row count Delta returns, and the table it leaves, must equal what
plain Spark computes from the rows, and each commit must have written deletion vectors rather
than rewritten the files.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from delta_oracle import DeltaTable
from helpers import TEXT, TYPEMAP, assert_same_rows, read_table, write_table


def _rows(spark: SparkSession, first: int, n: int, user: str | None = None) -> DataFrame:
    """n rows with ids first..: six users, and a message naming one of four addresses."""
    ids = spark.range(first, first + n, numPartitions=2)
    return ids.select(
        F.col("id"),
        (F.lit(user) if user else F.concat(F.lit("user"), F.col("id") % 6)).alias("user"),
        F.concat(F.lit("request "), F.col("id"), F.lit(" from 10.0.0."), F.col("id") % 4).alias(
            "msg"
        ),
    )


def _assert_dv_commit(delta: DeltaTable, operation: str) -> None:
    name, metrics = delta.last_operation()
    assert name == operation
    assert DeltaTable.deletion_vectors_in(metrics) > 0, metrics


def test_the_same_rows_on_both_sides(spark: SparkSession, layout: str, tmp_path: Path) -> None:
    rows = _rows(spark, 0, 60)
    ours = str(tmp_path / "indextables")
    write_table(rows, ours, options={TYPEMAP + "msg": TEXT})
    delta = DeltaTable.create(spark, str(tmp_path / "delta"), rows)
    (props,) = delta.sql("SHOW TBLPROPERTIES {table} ('delta.enableDeletionVectors')")
    assert props.value == "true"
    assert_same_rows(delta.read(), rows)
    assert_same_rows(read_table(spark, ours), delta.read())
    more = _rows(spark, 60, 10)
    write_table(more, ours, mode="append", options={TYPEMAP + "msg": TEXT})
    delta.append(more)
    assert_same_rows(read_table(spark, ours), delta.read())


def _ids(df: DataFrame) -> list[int]:
    return [int(r.id) for r in df.select("id").collect()]


# The statements run on Delta alone (ours cannot yet), whatever the layout: once. The expected
# rows are computed without a shuffle (filters over ids collected first): a few rows, cheaply.
def test_delta_counts_and_rows_are_what_spark_computes(spark: SparkSession, tmp_path: Path) -> None:
    rows = _rows(spark, 0, 60)
    delta = DeltaTable.create(spark, str(tmp_path / "delta"), rows)

    # DELETE: the rows of one user go.
    gone = rows.filter("user = 'user3'").count()
    (deleted,) = delta.sql("DELETE FROM {table} WHERE user = 'user3'")
    assert deleted.num_affected_rows == gone
    after_delete = rows.filter("user != 'user3'")
    assert_same_rows(delta.read(), after_delete)
    _assert_dv_commit(delta, "DELETE")

    # UPDATE: one user's messages are blanked out.
    changed = after_delete.filter("user = 'user1'").count()
    (updated,) = delta.sql("UPDATE {table} SET msg = 'redacted' WHERE user = 'user1'")
    assert updated.num_affected_rows == changed
    after_update = after_delete.withColumn(
        "msg", F.when(F.col("user") == "user1", F.lit("redacted")).otherwise(F.col("msg"))
    )
    assert_same_rows(delta.read(), after_update)
    _assert_dv_commit(delta, "UPDATE")

    # MERGE: ids 50-69 from a source: present ones change user, absent ones are inserted.
    source = _rows(spark, 50, 20, user="merged")
    source.createOrReplaceTempView("oracle_source")
    (merged,) = delta.sql(
        "MERGE INTO {table} t USING oracle_source s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET t.user = s.user "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    source_ids, target_ids = _ids(source), _ids(after_update)
    matched = after_update.filter(F.col("id").isin(source_ids))
    inserted = source.filter(~F.col("id").isin(target_ids))
    n_matched, n_inserted = matched.count(), inserted.count()
    assert (merged.num_updated_rows, merged.num_inserted_rows, merged.num_deleted_rows) == (
        n_matched,
        n_inserted,
        0,
    )
    assert merged.num_affected_rows == n_matched + n_inserted
    after_merge = (
        after_update.filter(~F.col("id").isin(source_ids))
        .unionByName(matched.withColumn("user", F.lit("merged")))
        .unionByName(inserted)
    )
    assert_same_rows(delta.read(), after_merge)
    _assert_dv_commit(delta, "MERGE")
