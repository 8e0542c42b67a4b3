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
    name, _metrics = delta.last_operation()
    assert name == operation
    assert delta.deletion_vectors_added() > 0


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


# The statements run on Delta alone (ours cannot yet), whatever the layout: once.
def test_delta_counts_and_rows_are_what_spark_computes(spark: SparkSession, tmp_path: Path) -> None:
    rows = _rows(spark, 0, 60)
    delta = DeltaTable.create(spark, str(tmp_path / "delta"), rows)

    # DELETE: the rows of one user go.
    gone = rows.filter("user = 'user3'")
    assert delta.sql("DELETE FROM {table} WHERE user = 'user3'")[0].num_affected_rows == (
        gone.count()
    )
    after_delete = rows.subtract(gone)
    assert_same_rows(delta.read(), after_delete)
    _assert_dv_commit(delta, "DELETE")

    # UPDATE: one user's messages are blanked out.
    changed = after_delete.filter("user = 'user1'")
    (updated,) = delta.sql("UPDATE {table} SET msg = 'redacted' WHERE user = 'user1'")
    assert updated.num_affected_rows == changed.count()
    after_update = after_delete.subtract(changed).unionByName(
        changed.withColumn("msg", F.lit("redacted"))
    )
    assert_same_rows(delta.read(), after_update)
    _assert_dv_commit(delta, "UPDATE")

    # MERGE: ids 50-69 from a source: present ones change user, absent ones are inserted.
    _rows(spark, 50, 20, user="merged").createOrReplaceTempView("oracle_source")
    (merged,) = delta.sql(
        "MERGE INTO {table} t USING oracle_source s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET t.user = s.user "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    source = spark.table("oracle_source")
    matched = after_update.join(source.select("id"), "id")
    inserted = source.join(after_update.select("id"), "id", "left_anti")
    assert (merged.num_updated_rows, merged.num_inserted_rows, merged.num_deleted_rows) == (
        matched.count(),
        inserted.count(),
        0,
    )
    assert merged.num_affected_rows == matched.count() + inserted.count()
    after_merge = (
        after_update.join(source.select("id"), "id", "left_anti")
        .unionByName(matched.withColumn("user", F.lit("merged")))
        .unionByName(inserted)
    )
    assert_same_rows(delta.read(), after_merge)
    _assert_dv_commit(delta, "MERGE")
