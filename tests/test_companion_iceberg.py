"""BUILD INDEXTABLES COMPANION FOR ICEBERG end to end: an index over a real Iceberg table, kept in
sync.

Every Iceberg table here is made and changed by Iceberg's own Spark runtime (its JAR beside the
plugin, as tests/delta_oracle.py sets the session up), in a Hadoop catalog registered as `ice`:
appends, DELETE, UPDATE and MERGE that write position deletes (merge-on-read) or v3 deletion
vectors, a rewrite of the data files, an overwrite and an expired snapshot. After each change the
index is synced, and every answer read through it (full scans, searches pushed to the index,
counts and groupings) is compared with the same query on the table read by Iceberg. No row
Iceberg deleted may come back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, Row, SparkSession

import delta_oracle
from helpers import FORMAT, assert_same_rows, jvm, read_table, write_table
from indextables.exceptions import IndexTablesError
from test_companion_delta import (
    SCHEMA,
    assert_index_answers_as,
    assert_no_third_row_comes_back,
    assert_paths_that_hold_no_table_are_named,
    error_of,
    make_rows,
    plan_of,
)

pytestmark = pytest.mark.skipif(
    not (delta_oracle.is_installed() and delta_oracle.iceberg_installed()),
    reason="build/package.sh puts Iceberg's JAR in place (Iceberg has no runtime for Spark 4.2)",
)

CATALOG = delta_oracle.ICEBERG_CATALOG
# Row-level statements that write delete files instead of rewriting data files.
MERGE_ON_READ = (
    "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', "
    "'write.merge.mode' = 'merge-on-read'"
)


def create_iceberg(
    spark: SparkSession, name: str, rows: DataFrame, version: int = 2, partitioned: bool = True
) -> str:
    """An Iceberg table `ice.db.<name>` made by Iceberg's CREATE TABLE, holding rows."""
    table = f"{CATALOG}.db.{name}"
    columns = ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in SCHEMA.fields)
    spark.sql(
        f"CREATE TABLE {table} ({columns}) USING iceberg "
        + ("PARTITIONED BY (day) " if partitioned else "")
        + f"TBLPROPERTIES ('format-version' = '{version}', {MERGE_ON_READ})"
    )
    rows.writeTo(table).append()
    return table


def build_statement(table: str, index: Path, clauses: str = "") -> str:
    """BUILD ... FOR ICEBERG of `ice.db.<name>` by its catalog."""
    return (
        f"BUILD INDEXTABLES COMPANION FOR ICEBERG '{table.removeprefix(CATALOG + '.')}' "
        f"CATALOG '{CATALOG}' AT LOCATION '{index}' {clauses}"
    )


def build(spark: SparkSession, table: str, index: Path, clauses: str = "") -> Row:
    (row,) = spark.sql(build_statement(table, index, clauses)).collect()
    return row


def iceberg_api(spark: SparkSession, table: str) -> Any:
    """Iceberg's own Table for `table`, loaded through its Spark catalog."""
    return jvm(spark).org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, table
    )


def snapshot_id(spark: SparkSession, table: str) -> int:
    return int(iceberg_api(spark, table).currentSnapshot().snapshotId())


def delete_files(spark: SparkSession, table: str) -> int:
    """How many delete files (position deletes or deletion vectors) the table's snapshot has."""
    return spark.table(f"{table}.delete_files").count()


def assert_answers_match(spark: SparkSession, index: Path, table: str) -> None:
    """Every kind of read through the index answers as Iceberg does on its own table."""
    assert_index_answers_as(spark, index, spark.table(table))


def test_an_index_follows_every_kind_of_iceberg_change(
    spark: SparkSession, ice: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    table = create_iceberg(spark, "events", make_rows(spark, 900, seed=1, first_id=0))
    first = build(spark, table, index)
    assert first.status == "success"
    assert first.source_version == snapshot_id(spark, table)
    assert first.splits_created > 0
    assert first.source_path.endswith("/db/events")
    assert_answers_match(spark, index, table)

    # An append: only its files are indexed.
    before = spark.table(f"{table}.files").count()
    make_rows(spark, 300, seed=2, first_id=900).writeTo(table).append()
    added = spark.table(f"{table}.files").count() - before
    row = build(spark, table, index)
    assert (row.status, row.parquet_files_indexed, row.splits_invalidated) == (
        "success",
        added,
        0,
    )
    assert_answers_match(spark, index, table)

    # A DELETE that writes position deletes: no file is indexed again.
    spark.sql(f"DELETE FROM {table} WHERE host = 'host-3' OR id % 7 = 0")
    assert delete_files(spark, table) > 0
    row = build(spark, table, index)
    assert (row.status, row.parquet_files_indexed) == ("success", 0)
    assert_answers_match(spark, index, table)

    # An UPDATE: position deletes on the old files, the new values in new files.
    spark.sql(f"UPDATE {table} SET level = 'FATAL', status = 503 WHERE host = 'host-1'")
    build(spark, table, index)
    assert_answers_match(spark, index, table)

    # A MERGE of changed and new rows.
    make_rows(spark, 200, seed=3, first_id=1100).createOrReplaceTempView("iceberg_changes")
    spark.sql(
        f"MERGE INTO {table} t USING iceberg_changes s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    build(spark, table, index)
    assert_answers_match(spark, index, table)

    # A rewrite of every data file (which applies the deletes; the delete files stay, older than
    # the new files, so that they no longer apply): every split is replaced.
    jvm(spark).org.apache.iceberg.spark.actions.SparkActions.get(
        spark._jsparkSession
    ).rewriteDataFiles(iceberg_api(spark, table)).option("rewrite-all", "true").execute()
    row = build(spark, table, index)
    assert row.splits_invalidated > 0 and row.parquet_files_indexed > 0
    assert_answers_match(spark, index, table)

    # Expiring every older snapshot deletes files no live snapshot needs: the index reads none.
    api = iceberg_api(spark, table)
    api.expireSnapshots().expireOlderThan(api.currentSnapshot().timestampMillis() + 1).retainLast(
        1
    ).commit()
    assert spark.table(f"{table}.snapshots").count() == 1
    row = build(spark, table, index)
    assert (row.status, row.parquet_files_indexed) == ("no_action", 0)
    assert_answers_match(spark, index, table)

    # An overwrite replaces every file.
    make_rows(spark, 400, seed=4, first_id=5000).writeTo(table).overwritePartitions()
    row = build(spark, table, index)
    assert row.source_version == snapshot_id(spark, table)
    assert_answers_match(spark, index, table)
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{index}'").collect()
    assert (state.source_format, state.source_version) == ("iceberg", row.source_version)
    assert state.source_path == row.source_path
    assert f"source iceberg {row.source_path} at snapshot {row.source_version}" in plan_of(
        read_table(spark, str(index))
    )


@pytest.mark.parametrize("version", [2, 3])
def test_rows_iceberg_deleted_never_come_back_through_any_route(
    spark: SparkSession, ice: Path, tmp_path: Path, version: int
) -> None:
    """Format 2 deletes by position delete files; format 3 by deletion vectors in Puffin files."""
    index = tmp_path / "index"
    table = create_iceberg(
        spark, f"deleted_v{version}", make_rows(spark, 600, seed=5, first_id=0, files=1), version
    )
    spark.sql(f"DELETE FROM {table} WHERE id % 3 = 0")
    formats = {r.file_format for r in spark.table(f"{table}.delete_files").collect()}
    assert formats == ({"PARQUET"} if version == 2 else {"PUFFIN"})
    # The first build indexes files that already have deletes.
    row = build(spark, table, index)
    assert row.status == "success"
    assert_answers_match(spark, index, table)
    assert_no_third_row_comes_back(spark, index)
    # More deletes on the same files: the splits get new vectors, nothing is indexed again.
    spark.sql(f"DELETE FROM {table} WHERE host = 'host-4'")
    row = build(spark, table, index)
    assert (row.status, row.parquet_files_indexed) == ("success", 0)
    assert_answers_match(spark, index, table)
    # MERGE SPLITS cannot rewrite the source's rows: it leaves the splits with vectors alone.
    spark.sql(f"MERGE SPLITS '{index}' TARGET SIZE 100M").collect()
    assert_answers_match(spark, index, table)


def test_from_snapshot_indexes_the_table_as_it_was(
    spark: SparkSession, ice: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    table = create_iceberg(spark, "history", make_rows(spark, 300, seed=6, first_id=0))
    at = snapshot_id(spark, table)
    make_rows(spark, 300, seed=7, first_id=300).writeTo(table).append()
    spark.sql(f"DELETE FROM {table} WHERE id < 100")
    row = build(spark, table, index, f"FROM SNAPSHOT {at}")
    assert row.source_version == at
    then = spark.sql(f"SELECT * FROM {table} VERSION AS OF {at}")
    assert_same_rows(read_table(spark, str(index)), then)
    # A later build without it brings the index to the current snapshot.
    row = build(spark, table, index)
    assert row.source_version == snapshot_id(spark, table)
    assert_answers_match(spark, index, table)


def test_a_table_is_found_by_path_and_by_warehouse(
    spark: SparkSession, ice: Path, tmp_path: Path
) -> None:
    table = create_iceberg(
        spark, "located", make_rows(spark, 200, seed=8, first_id=0), partitioned=False
    )
    location = ice / "db" / "located"
    by_path, by_warehouse = tmp_path / "by_path", tmp_path / "by_warehouse"
    spark.sql(
        f"BUILD INDEXTABLES COMPANION FOR ICEBERG '{location}' AT LOCATION '{by_path}'"
    ).collect()
    spark.sql(
        f"BUILD INDEXTABLES COMPANION FOR ICEBERG 'db.located' WAREHOUSE '{ice}' "
        f"AT LOCATION '{by_warehouse}'"
    ).collect()
    for index in (by_path, by_warehouse):
        assert_answers_match(spark, index, table)
    # Nothing new: a second build commits nothing.
    versions = sorted((by_path / "_transaction_log").glob("*.json"))
    (row,) = spark.sql(
        f"BUILD INDEXTABLES COMPANION FOR ICEBERG '{location}' AT LOCATION '{by_path}'"
    ).collect()
    assert (row.status, row.version) == ("no_action", None)
    assert sorted((by_path / "_transaction_log").glob("*.json")) == versions
    # The index is read-only, and says what it indexes.
    with pytest.raises(IndexTablesError) as e:
        write_table(make_rows(spark, 5, seed=1, first_id=0), str(by_path), mode="append")
    assert e.value.error_class == "INDEXTABLES_COMPANION_INDEX_READ_ONLY"
    assert "FOR ICEBERG" in str(e.value)


def test_a_stale_iceberg_index_fails_reads_that_bound_the_lag(
    spark: SparkSession, ice: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    table = create_iceberg(spark, "stale", make_rows(spark, 100, seed=9, first_id=0))
    synced = build(spark, table, index).source_version
    for i in range(2):
        make_rows(spark, 50, seed=11 + i, first_id=1000 + 100 * i, files=1).writeTo(table).append()
    lag = "spark.indextables.read.companion.maxSourceVersionLag"

    def read(allowed: int) -> DataFrame:
        return spark.read.format(FORMAT).option(lag, str(allowed)).load(str(index))

    with pytest.raises(IndexTablesError) as e:
        read(1).count()
    assert e.value.error_class == "INDEXTABLES_COMPANION_INDEX_STALE"
    assert f"snapshot {synced}" in str(e.value) and "2 snapshots behind" in str(e.value)
    assert read(2).count() == 100  # as of the last sync
    # The Python handle syncs the index from its own record of the source.
    from indextables import IndexTable

    row = IndexTable.for_path(spark, str(index)).sync_companion()
    assert (row.status, row.source_version) == ("success", snapshot_id(spark, table))
    assert read(0).count() == 200
    # Once the synced snapshot is expired, the index is as far behind as can be.
    make_rows(spark, 10, seed=13, first_id=3000, files=1).writeTo(table).append()
    api = iceberg_api(spark, table)
    api.expireSnapshots().expireSnapshotId(row.source_version).commit()
    with pytest.raises(IndexTablesError) as e:
        read(100).count()
    assert "no longer holds snapshot" in str(e.value)


def test_bad_iceberg_sources_are_named_and_nothing_is_committed(
    spark: SparkSession, ice: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    head = "BUILD INDEXTABLES COMPANION FOR ICEBERG"
    parquet = assert_paths_that_hold_no_table_are_named(spark, head, tmp_path, index)
    # A table the catalog does not hold, and a catalog that is not Iceberg's.
    e = error_of(spark, f"{head} 'db.absent' CATALOG '{CATALOG}' AT LOCATION '{index}'")
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_NOT_A_TABLE", str(e)
    assert "db.absent" in str(e)
    e = error_of(spark, f"{head} 'db.absent' CATALOG 'spark_catalog' AT LOCATION '{index}'")
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_NOT_A_TABLE", str(e)
    assert "spark_catalog" in str(e)

    # A snapshot the table never had, and one that expired.
    table = create_iceberg(spark, "bad", make_rows(spark, 50, seed=2, first_id=0))
    name = table.removeprefix(CATALOG + ".")
    e = error_of(
        spark, f"{head} '{name}' CATALOG '{CATALOG}' AT LOCATION '{index}' FROM SNAPSHOT 7"
    )
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_VERSION_UNAVAILABLE", str(e)
    assert "snapshot 7" in str(e)
    first = snapshot_id(spark, table)
    make_rows(spark, 5, seed=3, first_id=100, files=1).writeTo(table).append()
    iceberg_api(spark, table).expireSnapshots().expireSnapshotId(first).commit()
    e = error_of(
        spark, f"{head} '{name}' CATALOG '{CATALOG}' AT LOCATION '{index}' FROM SNAPSHOT {first}"
    )
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_VERSION_UNAVAILABLE", str(e)

    # A renamed column: the older files name it otherwise.
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN host TO server")
    e = error_of(spark, f"{head} '{name}' CATALOG '{CATALOG}' AT LOCATION '{index}'")
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_FEATURE_UNSUPPORTED", str(e)
    assert "renamed column (host → server)" in str(e)

    # The clauses of another format, and CATALOG with WAREHOUSE.
    for clauses in (f"CATALOG '{CATALOG}' WAREHOUSE '{ice}'", "FROM VERSION 1"):
        e = error_of(spark, f"{head} '{name}' {clauses} AT LOCATION '{index}'")
        assert e.error_class == "INDEXTABLES_COMPANION_INVALID_OPTION", str(e)
    e = error_of(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR DELTA '{parquet}' CATALOG 'x' AT LOCATION '{index}'",
    )
    assert e.error_class == "INDEXTABLES_COMPANION_INVALID_OPTION", str(e)
    assert not index.exists()


def test_a_type_change_after_a_build_is_named(
    spark: SparkSession, ice: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    table = create_iceberg(spark, "widened", make_rows(spark, 50, seed=4, first_id=0))
    build(spark, table, index)
    versions = sorted((index / "_transaction_log").glob("*.json"))
    spark.sql(f"ALTER TABLE {table} ALTER COLUMN status TYPE bigint")
    e = error_of(spark, build_statement(table, index))
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_FEATURE_UNSUPPORTED", str(e)
    assert "status" in str(e)
    assert sorted((index / "_transaction_log").glob("*.json")) == versions
