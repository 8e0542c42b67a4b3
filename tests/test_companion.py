"""The companion layout (`spark.indextables.write.layout=companion`): each write task writes
its rows as a Parquet file and an index-only split over it. What only this layout has: the
files on disk, the log's record of them, the read route each scan takes, and the errors of a
table whose Parquet files went missing. Everything both layouts share runs on both through the
`layout` fixture (tests/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import (
    TYPEMAP,
    assert_same_rows,
    error_text,
    jvm,
    read_table,
    scan_node,
    split_files,
    version_actions,
    write_table,
)
from indextables import UnsupportedSparkError

LAYOUT = "spark.indextables.write.layout"
COMPANION = {LAYOUT: "companion", TYPEMAP + "message": "text"}


def _forget_cached_logs(spark: SparkSession) -> None:
    jvm(spark).io.indextables.spark.transaction.TransactionLog.clearCache()


@pytest.fixture
def rows(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(
        [
            (i, f"host-{i % 3}", f"request {i} {'timed out' if i % 10 == 0 else 'ok'}", i % 2)
            for i in range(400)
        ],
        "id long, host string, message string, part int",
    ).repartition(2)


def _parquet_files(path: str) -> list[Path]:
    return sorted(Path(path).rglob("*.parquet"))


def test_each_split_has_its_parquet_file_and_the_log_names_it(
    spark: SparkSession, rows: DataFrame, tmp_table: str
) -> None:
    write_table(rows, tmp_table, partition_by=("part",), options=COMPANION)
    splits, parquet = split_files(tmp_table), _parquet_files(tmp_table)
    assert splits and len(splits) == len(parquet)
    assert {s.with_suffix("") for s in splits} == {p.with_suffix("") for p in parquet}
    actions = version_actions(tmp_table, 0)
    protocol = next(a["protocol"] for a in actions if "protocol" in a)
    assert "parquetCompanion" in protocol["readerFeatures"]
    assert "parquetCompanion" in protocol["writerFeatures"]
    config = next(a["metaData"] for a in actions if "metaData" in a)["configuration"]
    assert config["indextables.companion.enabled"] == "true"
    adds = [a["add"] for a in actions if "add" in a]
    for add in adds:
        (source,) = add["companionSourceFiles"]
        assert source == add["path"].removesuffix(".split") + ".parquet"
        assert (Path(tmp_table) / source).is_file()
    # The Parquet files are ordinary ones: Spark reads them back by themselves.
    assert spark.read.parquet(*map(str, parquet)).count() == 400


def test_scans_take_the_parquet_route_and_searches_the_index(
    spark: SparkSession, rows: DataFrame, tmp_table: str
) -> None:
    write_table(rows, tmp_table, partition_by=("part",), options=COMPANION)
    table = read_table(spark, tmp_table)
    full = scan_node(table)
    assert "Route: parquet (no filter for the index)" in full, full
    assert "Route: parquet" in scan_node(table.filter(F.col("id") % 7 == 1))
    assert "Route: parquet" in scan_node(table.filter("part = 1"))
    searched = scan_node(table.filter("message indexquery 'timed'"))
    assert "Route: parquet" not in searched and "PushedQuery" in searched
    assert "Route: parquet" not in scan_node(table.filter(F.col("host") == "host-1"))
    expected = rows.filter(F.col("message").contains("timed out"))
    assert_same_rows(table.filter("message indexquery 'timed'"), expected)
    assert_same_rows(table, rows)
    # A full scan comes out of Spark's vectorized Parquet reader, in columnar batches.
    plan = str(table._jdf.queryExecution().executedPlan().toString())
    assert "ColumnarToRow" in plan, plan


def test_the_layout_is_the_tables_own(
    spark: SparkSession, rows: DataFrame, tmp_table: str, tmp_path: Path
) -> None:
    write_table(rows, tmp_table, options=COMPANION)
    # An append without the option keeps the table's layout.
    write_table(rows, tmp_table, mode="append")
    assert len(_parquet_files(tmp_table)) == len(split_files(tmp_table))
    assert read_table(spark, tmp_table).count() == 800
    # Asking for the other layout fails, naming both.
    with pytest.raises(Exception) as err:
        write_table(rows, tmp_table, mode="append", options={LAYOUT: "splits"})
    assert "INDEXTABLES_LAYOUT_MISMATCH" in error_text(err.value)
    assert "companion" in error_text(err.value)
    # A session default makes new tables companion tables, and leaves splits tables alone.
    splits_table = str(tmp_path / "splits")
    write_table(rows, splits_table)
    spark.conf.set(LAYOUT, "companion")
    try:
        write_table(rows, splits_table, mode="append")
        assert not _parquet_files(splits_table)
        new_table = str(tmp_path / "new")
        write_table(rows, new_table)
        assert _parquet_files(new_table)
    finally:
        spark.conf.unset(LAYOUT)
    with pytest.raises(Exception) as bad:
        write_table(rows, str(tmp_path / "bad"), options={LAYOUT: "columns"})
    assert "spark.indextables.write.layout" in error_text(bad.value)


def test_a_reader_that_does_not_know_a_feature_refuses_the_table(
    spark: SparkSession, rows: DataFrame, tmp_table: str
) -> None:
    write_table(rows, tmp_table, options=COMPANION)
    log_file = Path(tmp_table) / "_transaction_log" / f"{0:020d}.json"
    actions = version_actions(tmp_table, 0)
    for a in actions:
        if "protocol" in a:
            a["protocol"]["readerFeatures"].append("futureFeature")
    log_file.write_text("\n".join(json.dumps(a) for a in actions) + "\n")
    _forget_cached_logs(spark)
    with pytest.raises(Exception) as err:
        read_table(spark, tmp_table).count()
    text = error_text(err.value)
    assert "INDEXTABLES_UNSUPPORTED_FEATURE" in text and "futureFeature" in text


def test_a_missing_parquet_file_fails_naming_it(
    spark: SparkSession, rows: DataFrame, tmp_table: str
) -> None:
    write_table(rows.coalesce(1), tmp_table, options=COMPANION)
    (gone,) = _parquet_files(tmp_table)
    gone.unlink()
    table = read_table(spark, tmp_table)
    with pytest.raises(Exception) as scan:
        table.collect()
    assert "INDEXTABLES_COMPANION_FILE_UNREADABLE" in error_text(scan.value)
    assert gone.name in error_text(scan.value)
    with pytest.raises(Exception) as search:
        table.filter(F.col("host") == "host-1").collect()
    assert "INDEXTABLES_COMPANION_FILE_UNREADABLE" in error_text(search.value)
    assert gone.name in error_text(search.value)


def test_purge_deletes_the_parquet_files_of_replaced_splits(
    spark: SparkSession, rows: DataFrame, tmp_table: str
) -> None:
    write_table(rows, tmp_table, options=COMPANION)
    first = set(_parquet_files(tmp_table))
    write_table(rows.filter("id < 100"), tmp_table, mode="overwrite")
    spark.conf.set("spark.indextables.purge.retentionCheckEnabled", "false")
    try:
        # Old splits stay referenced by version 0 until its version file goes: purge with the
        # log retention at zero (a checkpoint first, so the log may be cleaned).
        spark.sql(f"CHECKPOINT INDEXTABLES '{tmp_table}'").collect()
        spark.sql(
            f"PURGE INDEXTABLE '{tmp_table}' OLDER THAN 0 HOURS TRANSACTION LOG RETENTION 0 HOURS"
        ).collect()
    finally:
        spark.conf.unset("spark.indextables.purge.retentionCheckEnabled")
    left = set(_parquet_files(tmp_table))
    assert len(left) == len(split_files(tmp_table))
    assert_same_rows(read_table(spark, tmp_table), rows.filter("id < 100"))
    # Whatever the purge could free of the first write's files, it freed with their splits.
    assert {p.with_suffix("") for p in first - left} <= {p.with_suffix("") for p in first} - {
        s.with_suffix("") for s in split_files(tmp_table)
    }


def test_merge_splits_keeps_every_row_and_its_parquet_files(
    spark: SparkSession, rows: DataFrame, tmp_table: str
) -> None:
    for i in range(4):
        write_table(
            rows.filter(F.col("id") % 4 == i).coalesce(1),
            tmp_table,
            mode="append" if i else "errorifexists",
            options=COMPANION if not i else None,
        )
    assert len(split_files(tmp_table)) == 4
    spark.sql(f"MERGE SPLITS '{tmp_table}' TARGET SIZE 100M").collect()
    _forget_cached_logs(spark)
    table = read_table(spark, tmp_table)
    assert_same_rows(table, rows)
    assert_same_rows(table.filter(F.col("host") == "host-2"), rows.filter("host = 'host-2'"))
    assert_same_rows(
        table.filter("message indexquery 'timed'"),
        rows.filter(F.col("message").contains("timed")),
    )
    assert "Splits: 1/1" in scan_node(table.filter(F.col("host") == "host-2"))


def test_the_layout_survives_checkpoints_and_log_cleanup(
    spark: SparkSession, rows: DataFrame, tmp_table: str
) -> None:
    """An Avro state records only a protocol version: the companion feature rides in the
    metadata it stores, so a table whose early version files are gone is still read, and
    written, as a companion table."""
    write_table(rows, tmp_table, options=COMPANION)
    write_table(rows, tmp_table, mode="append")
    spark.sql(f"CHECKPOINT INDEXTABLES '{tmp_table}'").collect()
    for v in (0, 1):
        (Path(tmp_table) / "_transaction_log" / f"{v:020d}.json").unlink()
    _forget_cached_logs(spark)
    write_table(rows, tmp_table, mode="append")
    assert len(_parquet_files(tmp_table)) == len(split_files(tmp_table))
    table = read_table(spark, tmp_table)
    assert "Route: parquet" in scan_node(table)
    assert table.count() == 1200
    assert_same_rows(
        table.filter(F.col("host") == "host-0").groupBy("id").count(),
        rows.filter("host = 'host-0'").groupBy("id").count().selectExpr("id", "count * 3 AS count"),
    )


def _replace_with_other_rows(spark: SparkSession, target: Path, tmp_path: Path, n: int) -> None:
    """Overwrites `target` in place with a Parquet file of `n` other rows of the same schema."""
    other = tmp_path / "other"
    (
        spark.createDataFrame(
            [(10_000 + i, "host-1", f"intruder {i}") for i in range(n)],
            "id long, host string, message string",
        )
        .coalesce(1)
        .write.parquet(str(other))
    )
    (written,) = sorted(other.glob("*.parquet"))
    assert written.stat().st_size != target.stat().st_size
    target.write_bytes(written.read_bytes())


def test_a_parquet_file_changed_under_the_table_fails_naming_it(
    spark: SparkSession, rows: DataFrame, tmp_table: str, tmp_path: Path
) -> None:
    write_table(rows.drop("part").coalesce(1), tmp_table, options=COMPANION)
    (changed,) = _parquet_files(tmp_table)
    recorded = changed.stat().st_size
    _replace_with_other_rows(spark, changed, tmp_path, 50)
    table = read_table(spark, tmp_table)
    for query in (table, table.filter(F.col("host") == "host-1")):
        with pytest.raises(Exception) as failed:
            query.collect()
        text = error_text(failed.value)
        assert "INDEXTABLES_COMPANION_FILE_CHANGED" in text
        assert changed.name in text and str(recorded) in text


def _fast_fields(spark: SparkSession, path: str) -> set[str]:
    """The columns with a fast column of their own in some split of `path`."""
    rows = spark.sql(f"DESCRIBE INDEXTABLES COMPONENT SIZES '{path}'").collect()
    return {r.field for r in rows if r.component == "fastfield" and r.size_bytes > 0}


def test_string_columns_are_served_from_parquet_not_copied_into_the_splits(
    spark: SparkSession, rows: DataFrame, tmp_table: str, tmp_path: Path
) -> None:
    # HYBRID: numbers keep tantivy's fast columns; strings and text have none in the split,
    # since the Parquet file holds them (an aggregation reads them from there).
    write_table(rows, tmp_table, partition_by=("part",), options=COMPANION)
    fast = _fast_fields(spark, tmp_table)
    assert "id" in fast and not fast & {"host", "message"}, fast
    config = next(a["metaData"] for a in version_actions(tmp_table, 0) if "metaData" in a)
    assert config["configuration"]["indextables.companion.fastFieldMode"] == "HYBRID"
    # Answers that need the string columns' values come out as Parquet's.
    table = read_table(spark, tmp_table)
    assert_same_rows(
        table.groupBy("host").agg(F.count("*"), F.max("id")),
        rows.groupBy("host").agg(F.count("*"), F.max("id")),
    )
    assert_same_rows(
        table.where("message indexquery 'timed' AND host IS NOT NULL").select("id"),
        rows.where(F.col("message").contains("timed out")).select("id"),
    )
    # A BUILD may still ask for every fast column in the split.
    source = tmp_path / "source"
    rows.drop("part").write.parquet(str(source))
    index = tmp_path / "index"
    spark.sql(
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}' "
        "INDEXING MODES (message: 'text') FASTFIELDS MODE DISABLED"
    ).collect()
    assert {"id", "host", "message"} <= _fast_fields(spark, str(index))


def test_a_store_only_column_stays_out_of_the_index_and_is_filtered_by_spark(
    spark: SparkSession, rows: DataFrame, tmp_table: str
) -> None:
    options = {**COMPANION, "spark.indextables.indexing.storeonlyfields": "id"}
    rows = rows.union(spark.createDataFrame([(None, "host-0", "timed out", 0)], rows.schema))
    write_table(rows, tmp_table, partition_by=("part",), options=options)
    actions = version_actions(tmp_table, 0)
    config = next(a["metaData"] for a in actions if "metaData" in a)["configuration"]
    mappings = [v for k, v in config.items() if k.startswith("docMappingSchema.")]
    mappings += [
        a["add"]["docMappingJson"] for a in actions if a.get("add", {}).get("docMappingJson")
    ]
    for mapping in mappings:
        indexed = {f["name"] for f in json.loads(mapping)}
        assert "id" not in indexed and {"host", "message"} <= indexed, indexed
    table = read_table(spark, tmp_table)
    assert_same_rows(table, rows)
    # A search fetches its rows from Parquet, and Spark applies the filter on `id`.
    searched = table.where("message indexquery 'timed' AND id < 100")
    assert_same_rows(searched, rows.where(F.col("message").contains("timed") & (F.col("id") < 100)))
    assert "LessThan(id" not in scan_node(searched), scan_node(searched)
    present = table.where("message indexquery 'timed' AND id IS NOT NULL")
    assert_same_rows(
        present, rows.where(F.col("message").contains("timed") & F.col("id").isNotNull())
    )


@pytest.mark.skipif(
    not pyspark.__version__.startswith("4.2."),
    reason="companions over Iceberg tables are served on Spark 3.5, 4.0 and 4.1",
)
def test_a_companion_over_iceberg_is_refused_on_spark_4_2(
    spark: SparkSession, tmp_path: Path
) -> None:
    # Refused before any class of Iceberg's is touched: there is no Iceberg runtime for 4.2.
    sql = (
        f"BUILD INDEXTABLES COMPANION FOR ICEBERG '{tmp_path / 'source'}' "
        f"AT LOCATION '{tmp_path / 'index'}'"
    )
    with pytest.raises(UnsupportedSparkError) as e:
        spark.sql(sql).collect()
    assert e.value.error_class == "INDEXTABLES_COMPANION_SOURCE_UNSUPPORTED_SPARK"
    assert e.value.getSqlState() == "0A000"
    assert f"this is Spark {spark.version}" in str(e.value)
    assert "served on Spark 3.5.x, 4.0.x and 4.1.x only" in str(e.value)
    assert "on Spark 3.5, 4.0 or 4.1, or build" in str(e.value)
    assert not (tmp_path / "index").exists()
