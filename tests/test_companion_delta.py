"""BUILD INDEXTABLES COMPANION FOR DELTA end to end: an index over a real Delta table, kept in sync.

Every Delta table here is made and changed by delta-spark itself (its JARs beside the plugin, as
tests/delta_oracle.py sets the session up): appends, DELETE with deletion vectors on and off,
UPDATE, MERGE, overwrite, OPTIMIZE and VACUUM. After each change the index is synced, and every
answer read through it (full scans, searches pushed to the index, counts and groupings) is
compared with the same query on the table read by Delta. No row Delta deleted may come back.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, IntegerType, LongType, StringType, StructField, StructType

import delta_oracle
from helpers import FORMAT, assert_same_rows, jvm, read_table, write_table
from indextables.exceptions import IndexTablesError

pytestmark = pytest.mark.skipif(
    not delta_oracle.is_installed(), reason="build/package.sh puts Delta Lake's JARs in place"
)

WORDS = ["timeout", "connection", "reset", "disk", "full", "error", "served", "retry", "lock"]
LEVELS = ["ERROR", "WARN", "INFO", None]
DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]

SCHEMA = StructType(
    [
        StructField("id", LongType(), True),
        StructField("msg", StringType(), True),
        StructField("host", StringType(), True),
        StructField("level", StringType(), True),
        StructField("latency", DoubleType(), True),
        StructField("status", IntegerType(), True),
        StructField("day", StringType(), True),
    ]
)


def make_rows(spark: SparkSession, n: int, seed: int, first_id: int, files: int = 2) -> DataFrame:
    rng = random.Random(seed)
    rows = [
        (
            i,
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))),
            f"host-{rng.randint(0, 9)}",
            rng.choice(LEVELS),
            round(rng.uniform(0, 500), 3),
            rng.choice([200, 404, 500]),
            rng.choice(DAYS),
        )
        for i in range(first_id, first_id + n)
    ]
    return spark.createDataFrame(rows, SCHEMA).repartition(files)


def create_delta(
    spark: SparkSession, path: Path, rows: DataFrame, vectors: bool = True, extra: str = ""
) -> delta_oracle.DeltaTable:
    """A Delta table partitioned by day, made by Delta's own CREATE TABLE, holding rows."""
    table = delta_oracle.DeltaTable(spark, str(path))
    columns = ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in SCHEMA.fields)
    props = f"'delta.enableDeletionVectors' = '{str(vectors).lower()}'" + extra
    spark.sql(
        f"CREATE TABLE {table.name} ({columns}) USING delta PARTITIONED BY (day) "
        f"TBLPROPERTIES ({props})"
    )
    table.append(rows)
    return table


def build(spark: SparkSession, source: Path | str, index: Path | str, clauses: str = "") -> Row:
    (row,) = spark.sql(
        f"BUILD INDEXTABLES COMPANION FOR DELTA '{source}' AT LOCATION '{index}' {clauses}"
    ).collect()
    return row


def delta_version(spark: SparkSession, path: Path | str) -> int:
    log = jvm(spark).org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, str(path))
    return int(
        log.update(
            False, jvm(spark).scala.Option.empty(), jvm(spark).scala.Option.empty()
        ).version()
    )


def delta_api(spark: SparkSession, path: Path | str) -> Any:
    """Delta's own Scala DeltaTable for path (OPTIMIZE, VACUUM)."""
    return jvm(spark).io.delta.tables.DeltaTable.forPath(spark._jsparkSession, str(path))


def data_files(source: Path) -> set[Path]:
    """The table's Parquet data files (not its log's checkpoints), live or not."""
    return {p for p in source.rglob("*.parquet") if "_delta_log" not in p.parts}


def live_files(delta: delta_oracle.DeltaTable) -> set[Path]:
    """The data files of the table's latest version, as Delta reads them."""
    return {Path(u.removeprefix("file:")) for u in delta.read().inputFiles()}


def plan_of(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def assert_answers_match(spark: SparkSession, index: Path, delta: delta_oracle.DeltaTable) -> None:
    """Every kind of read through the index answers as Delta does on its own table."""
    assert_index_answers_as(spark, index, delta.read())


def assert_index_answers_as(spark: SparkSession, index: Path | str, src: DataFrame) -> None:
    """Every kind of read through the index (full scans, searches pushed to it, counts and
    groupings) answers as `src`, the source table read by its own reader."""
    idx = read_table(spark, str(index))
    assert_same_rows(idx, src)
    for condition in (
        F.col("host") == "host-3",
        (F.col("status") == 404) & (F.col("level") == "ERROR"),
        F.col("id").isin(3, 17, 250, 999, 1203),
    ):
        found = idx.where(condition)
        assert "PushedQuery" in plan_of(found), plan_of(found)
        assert_same_rows(found, src.where(condition))
    assert idx.count() == src.count()
    assert_same_rows(idx.groupBy("level").count(), src.groupBy("level").count())
    assert_same_rows(
        idx.where(F.col("host") == "host-5").groupBy("day").count(),
        src.where(F.col("host") == "host-5").groupBy("day").count(),
    )


def test_an_index_follows_every_kind_of_delta_change(spark: SparkSession, tmp_path: Path) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 900, seed=1, first_id=0))
    first = build(spark, source, index)
    assert first.status == "success"
    assert first.source_version == delta_version(spark, source)
    assert first.splits_created > 0
    assert_answers_match(spark, index, delta)

    # An append: only its files are indexed.
    before = data_files(source)
    delta.append(make_rows(spark, 300, seed=2, first_id=900))
    added = data_files(source) - before
    row = build(spark, source, index)
    assert (row.status, row.parquet_files_indexed, row.splits_invalidated) == (
        "success",
        len(added),
        0,
    )
    assert_answers_match(spark, index, delta)

    # A DELETE that marks rows in deletion vectors: no file is indexed again.
    delta.sql("DELETE FROM {table} WHERE host = 'host-3' OR id % 7 = 0")
    assert delta_oracle.DeltaTable.deletion_vectors_in(delta.last_operation()[1]) > 0
    row = build(spark, source, index)
    assert (row.status, row.parquet_files_indexed) == ("success", 0)
    assert_answers_match(spark, index, delta)

    # An UPDATE: vectors on the old files, the new values in new files.
    delta.sql("UPDATE {table} SET level = 'FATAL', status = 503 WHERE host = 'host-1'")
    build(spark, source, index)
    assert_answers_match(spark, index, delta)

    # A MERGE of changed and new rows.
    make_rows(spark, 200, seed=3, first_id=1100).createOrReplaceTempView("delta_changes")
    delta.sql(
        "MERGE INTO {table} t USING delta_changes s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    build(spark, source, index)
    assert_answers_match(spark, index, delta)

    # A DELETE with deletion vectors off rewrites whole files.
    delta.sql("ALTER TABLE {table} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')")
    delta.sql("DELETE FROM {table} WHERE level = 'WARN' AND day = '2024-01-02'")
    row = build(spark, source, index)
    assert row.splits_invalidated > 0
    assert_answers_match(spark, index, delta)

    # OPTIMIZE compacts files (and purges the rows vectors deleted), then VACUUM deletes the old.
    delta_api(spark, source).optimize().executeCompaction()
    build(spark, source, index)
    assert_answers_match(spark, index, delta)
    # (VACUUM lists the table in parallelPartitionDiscovery.parallelism tasks: 10,000 here.)
    vacuum = {
        "spark.databricks.delta.retentionDurationCheck.enabled": "false",
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2",
    }
    for key, value in vacuum.items():
        spark.conf.set(key, value)
    try:
        delta_api(spark, source).vacuum(0.0)
    finally:
        for key in vacuum:
            spark.conf.unset(key)
    # VACUUM changes no live file (Delta may log it as a version, which the index then records).
    row = build(spark, source, index)
    assert (row.status in ("no_action", "success"), row.parquet_files_indexed) == (True, 0)
    assert_answers_match(spark, index, delta)

    # An overwrite replaces every file.
    make_rows(spark, 400, seed=4, first_id=5000).write.format("delta").mode("overwrite").save(
        str(source)
    )
    row = build(spark, source, index)
    assert row.source_version == delta_version(spark, source)
    assert_answers_match(spark, index, delta)
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{index}'").collect()
    assert (state.source_format, state.source_version) == ("delta", row.source_version)
    assert state.source_path.endswith(str(source))
    assert f"source delta file:{source} at version {row.source_version}" in plan_of(
        read_table(spark, str(index))
    )


def test_rows_deleted_by_vectors_never_come_back_through_any_route(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 600, seed=5, first_id=0, files=1))
    delta.sql("DELETE FROM {table} WHERE id % 3 = 0")
    assert delta_oracle.DeltaTable.deletion_vectors_in(delta.last_operation()[1]) > 0
    # The first build indexes files that already carry vectors.
    row = build(spark, source, index)
    assert row.status == "success"
    assert_answers_match(spark, index, delta)
    assert_no_third_row_comes_back(spark, index)
    # MERGE SPLITS cannot rewrite the source's rows: it leaves the splits with vectors alone.
    spark.sql(f"MERGE SPLITS '{index}' TARGET SIZE 100M").collect()
    assert_answers_match(spark, index, delta)


def test_the_index_leaves_the_partition_columns_to_the_log(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A partition column's values are the Delta log's, not the files' (Delta 4.4 on Spark 4.2
    writes `day` into each Parquet file too): no split indexes it, every split indexes the rest."""
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 300, seed=21, first_id=0))
    assert build(spark, source, index).status == "success"
    splits = sorted(index.rglob("*.split"))
    assert splits
    reader = jvm(spark).io.indextables.tantivy4java.split.merge.QuickwitSplit
    for split in splits:
        mapping = json.loads(reader.readSplitMetadata(str(split)).getDocMappingJson())
        fields = {f["name"] for f in mapping}
        assert "day" not in fields, (split, sorted(fields))
        assert {"id", "msg", "host"} <= fields, (split, sorted(fields))
    assert_answers_match(spark, index, delta)
    day = "2024-01-02"
    assert_same_rows(
        read_table(spark, str(index)).where(F.col("day") == day),
        delta.read().where(F.col("day") == day),
    )


def test_from_version_indexes_the_table_as_it_was(spark: SparkSession, tmp_path: Path) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 300, seed=6, first_id=0))
    at = delta_version(spark, source)
    delta.append(make_rows(spark, 300, seed=7, first_id=300))
    delta.sql("DELETE FROM {table} WHERE id < 100")
    row = build(spark, source, index, f"FROM VERSION {at}")
    assert row.source_version == at
    then = spark.read.format("delta").option("versionAsOf", at).load(str(source))
    assert_same_rows(read_table(spark, str(index)), then)
    # A later build without it brings the index to the latest version.
    row = build(spark, source, index)
    assert row.source_version == delta_version(spark, source)
    assert_answers_match(spark, index, delta)


def test_a_sync_with_nothing_new_commits_nothing(spark: SparkSession, tmp_path: Path) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    create_delta(spark, source, make_rows(spark, 200, seed=8, first_id=0))
    build(spark, source, index)
    versions = sorted((index / "_transaction_log").glob("*.json"))
    row = build(spark, source, index)
    assert (row.status, row.version) == ("no_action", None)
    assert sorted((index / "_transaction_log").glob("*.json")) == versions


def test_the_index_is_read_only_and_names_its_delta_source(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    create_delta(spark, source, make_rows(spark, 100, seed=9, first_id=0))
    build(spark, source, index)
    with pytest.raises(IndexTablesError) as e:
        write_table(make_rows(spark, 5, seed=1, first_id=0), str(index), mode="append")
    assert e.value.error_class == "INDEXTABLES_COMPANION_INDEX_READ_ONLY"
    assert "FOR DELTA" in str(e.value)


def error_of(spark: SparkSession, sql: str) -> IndexTablesError:
    with pytest.raises(IndexTablesError) as e:
        spark.sql(sql).collect()
    return e.value


def assert_no_third_row_comes_back(spark: SparkSession, index: Path) -> None:
    """600 rows of which the source deleted those of an id divisible by 3: none comes back."""
    idx = read_table(spark, str(index))
    # No id divisible by 3 by any route: Parquet scan, search, aggregate, COUNT from the log.
    assert idx.where(F.col("id") % 3 == 0).count() == 0
    assert idx.where(F.col("host") == "host-2").where(F.col("id") % 3 == 0).count() == 0
    assert idx.count() == 400
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{index}'").collect()
    assert (state.num_records, state.num_deleted_rows) == (400, 200)


def assert_paths_that_hold_no_table_are_named(
    spark: SparkSession, head: str, tmp_path: Path, index: Path
) -> Path:
    """`head` (BUILD ... FOR <format>) over a folder of Parquet files, which is not a table of
    the format, and over a missing folder, which is named as missing; returns the folder."""
    parquet = tmp_path / "parquet"
    make_rows(spark, 20, seed=1, first_id=0).write.parquet(str(parquet))
    e = error_of(spark, f"{head} '{parquet}' AT LOCATION '{index}'")
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_NOT_A_TABLE", str(e)
    assert str(parquet) in str(e)
    e = error_of(spark, f"{head} '{tmp_path / 'nothing'}' AT LOCATION '{index}'")
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_NOT_FOUND", str(e)
    return parquet


def test_bad_sources_are_named_and_nothing_is_committed(
    spark: SparkSession, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    head = "BUILD INDEXTABLES COMPANION FOR DELTA"
    parquet = assert_paths_that_hold_no_table_are_named(spark, head, tmp_path, index)

    # A version the table does not hold, and one whose log was cleaned up.
    source = tmp_path / "delta"
    delta = create_delta(spark, source, make_rows(spark, 50, seed=2, first_id=0))
    e = error_of(spark, f"{head} '{source}' AT LOCATION '{index}' FROM VERSION 99")
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_VERSION_UNAVAILABLE", str(e)
    assert "version 99" in str(e)
    for i in range(1, 11):
        delta.append(make_rows(spark, 5, seed=10 + i, first_id=100 * i, files=1))
    assert (source / "_delta_log" / "00000000000000000010.checkpoint.parquet").exists()
    # What Delta's log cleanup does to versions past the retention: their commits are gone.
    for v in range(0, 5):
        (source / "_delta_log" / f"{v:020d}.json").unlink()
    e = error_of(spark, f"{head} '{source}' AT LOCATION '{index}' FROM VERSION 2")
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_VERSION_UNAVAILABLE", str(e)

    # Column mapping: the files' column names are not the table's.
    mapped = tmp_path / "mapped"
    create_delta(
        spark,
        mapped,
        make_rows(spark, 20, seed=3, first_id=0),
        extra=", 'delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', "
        "'delta.minWriterVersion' = '5'",
    )
    e = error_of(spark, f"{head} '{mapped}' AT LOCATION '{index}'")
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_FEATURE_UNSUPPORTED", str(e)
    assert "column mapping" in str(e)

    # FROM VERSION belongs to Delta; FROM SNAPSHOT to Iceberg.
    e = error_of(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{parquet}' AT LOCATION '{index}' FROM VERSION 1",
    )
    assert (e.error_class, "FROM VERSION" in str(e)) == (
        "INDEXTABLES_COMPANION_INVALID_OPTION",
        True,
    )
    assert not index.exists()

    # A table whose log is gone after the index was built: no longer a table, not an empty one.
    built = tmp_path / "built"
    assert build(spark, source, built).status == "success"
    versions = sorted((built / "_transaction_log").glob("*.json"))
    (source / "_delta_log").rename(tmp_path / "old-log")
    e = error_of(spark, f"{head} '{source}' AT LOCATION '{built}'")
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_NOT_A_TABLE", str(e)
    assert sorted((built / "_transaction_log").glob("*.json")) == versions


def test_a_type_change_in_the_source_is_named(spark: SparkSession, tmp_path: Path) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    create_delta(spark, source, make_rows(spark, 100, seed=4, first_id=0))
    build(spark, source, index)
    versions = sorted((index / "_transaction_log").glob("*.json"))
    changed = make_rows(spark, 50, seed=5, first_id=0).withColumn(
        "status", F.col("status").cast("string")
    )
    changed.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(
        str(source)
    )
    e = error_of(spark, f"BUILD INDEXTABLES COMPANION FOR DELTA '{source}' AT LOCATION '{index}'")
    assert e.error_class == "INDEXTABLES_COMPANION_SCHEMA_CHANGED", str(e)
    assert "status" in str(e)
    assert sorted((index / "_transaction_log").glob("*.json")) == versions


def test_two_syncs_racing_on_one_index_lose_and_double_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    import threading

    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 300, seed=6, first_id=0))
    build(spark, source, index)
    delta.append(make_rows(spark, 300, seed=7, first_id=300, files=3))
    outcomes: list[Any] = []

    def run() -> None:
        try:
            outcomes.append(build(spark, source, index).status)
        except IndexTablesError as e:
            outcomes.append(e.error_class)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert "success" in outcomes, outcomes
    assert set(outcomes) <= {"success", "no_action", "INDEXTABLES_COMPANION_BUILD_CONFLICT"}
    assert_answers_match(spark, index, delta)


def test_a_read_can_bound_how_far_the_index_lags_and_python_syncs_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 200, seed=10, first_id=0))
    build(spark, source, index)
    synced = delta_version(spark, source)
    for i in range(2):
        delta.append(make_rows(spark, 50, seed=11 + i, first_id=1000 + 100 * i, files=1))
    lag = "spark.indextables.read.companion.maxSourceVersionLag"

    def read(allowed: int) -> DataFrame:
        return spark.read.format(FORMAT).option(lag, str(allowed)).load(str(index))

    with pytest.raises(IndexTablesError) as e:
        read(1).count()
    assert e.value.error_class == "INDEXTABLES_COMPANION_INDEX_STALE"
    assert f"version {synced}" in str(e.value) and f"version {synced + 2}" in str(e.value)
    assert read(2).count() == 200  # as of the last sync
    # The Python handle syncs the index from its own record of the source.
    from indextables import IndexTable

    row = IndexTable.for_path(spark, str(index)).sync_companion()
    assert (row["status"], row["source_version"]) == ("success", synced + 2)
    assert_same_rows(read(0), delta.read())
    with pytest.raises(ValueError, match="not a companion index"):
        parquet_table = tmp_path / "plain"
        write_table(make_rows(spark, 5, seed=1, first_id=0), str(parquet_table))
        IndexTable.for_path(spark, str(parquet_table)).sync_companion()


@pytest.mark.line_neutral
def test_a_sync_killed_midway_leaves_the_index_as_it_was(
    spark: SparkSession, tmp_path: Path
) -> None:
    from killed_driver import KilledDriver

    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 300, seed=20, first_id=0))
    build(spark, source, index)
    synced = delta_version(spark, source)
    # Work for the killed sync: many new files, each its own split (TARGET INPUT SIZE 1).
    old_files = data_files(source)
    for i in range(3):
        delta.append(make_rows(spark, 400, seed=21 + i, first_id=1000 * (i + 1), files=8))
    jars = ":".join(str(j) for j in delta_oracle.oracle_jars())
    statement = (
        f"BUILD INDEXTABLES COMPANION FOR DELTA '{source}' AT LOCATION '{index}' "
        "TARGET INPUT SIZE 1"
    )
    driver = KilledDriver(
        tmp_path / "killed",
        "spark.sql(args[0]).collect()\n",
        [statement],
        {"spark.driver.extraClassPath": jars},
    )
    before = set(index.rglob("*.split"))
    versions = sorted((index / "_transaction_log").glob("*.json"))
    try:
        driver.run_until(
            lambda: len(set(index.rglob("*.split")) - before) >= 2, "the sync to write splits"
        )
    finally:
        driver.kill()
    # The index is at its previous version and answers as the table did then.
    assert sorted((index / "_transaction_log").glob("*.json")) == versions
    then = spark.read.format("delta").option("versionAsOf", synced).load(str(source))
    assert_same_rows(read_table(spark, str(index)), then)
    # The next sync finishes, and nothing is lost or doubled.
    row = build(spark, source, index, "TARGET INPUT SIZE 1")
    assert (row.status, row.parquet_files_indexed) == (
        "success",
        len(data_files(source) - old_files),
    )
    assert_answers_match(spark, index, delta)


def test_a_sync_whose_source_log_was_cleaned_up_lists_the_whole_table(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 100, seed=30, first_id=0, files=1))
    build(spark, source, index)
    synced = delta_version(spark, source)
    old_files = data_files(source)
    for i in range(11):
        delta.append(make_rows(spark, 10, seed=31 + i, first_id=1000 + 100 * i, files=1))
    delta.sql("DELETE FROM {table} WHERE id % 5 = 0")
    # What Delta's log cleanup does: the commits right after the index's version are gone, so
    # the sync cannot read only the changes since, and reads the table's whole state instead.
    assert list((source / "_delta_log").glob("*.checkpoint.parquet"))
    for v in range(synced + 1, synced + 3):
        (source / "_delta_log" / f"{v:020d}.json").unlink()
    row = build(spark, source, index)
    assert (row.status, row.parquet_files_indexed) == (
        "success",
        len(live_files(delta) - old_files),
    )
    assert_answers_match(spark, index, delta)
