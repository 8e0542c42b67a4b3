"""The cache commands and the DESCRIBE extras, through PySpark: FLUSH / DESCRIBE of the searcher
and disk caches, STORAGE STATS, ENVIRONMENT, COMPONENT SIZES, PREWARM, INVALIDATE TRANSACTION
LOG CACHE, DESCRIBE STATE's checkpoint columns, TRANSACTION LOG ... INCLUDE ALL and COMPACT.

The disk cache (tantivy4java's L2 tier) caches what it fetches from object storage, so those
tests use a table on the session's moto S3 server; the others use local tables. Every answer
read after a flush or a prewarm is compared with the same rows from a Parquet copy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import indextables
from helpers import assert_same_rows, error_text, read_table, write_table
from storage_servers import S3Server

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def _rows(spark: SparkSession, n: int = 3000) -> DataFrame:
    return spark.range(n).select(
        F.col("id"),
        (F.col("id") % 3).cast("int").alias("part"),
        F.concat_ws(
            " ",
            F.element_at(F.array(*[F.lit(w) for w in WORDS]), (F.col("id") % 8 + 1).cast("int")),
            F.lit("event"),
            F.col("id").cast("string"),
        ).alias("message"),
    )


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A partitioned table of two writes (9 splits: 3 and 6) and its Parquet copy."""
    base = tmp_path_factory.mktemp("cache-commands")
    path, parquet = str(base / "t"), str(base / "p")
    df = _rows(spark)
    opts = {"spark.indextables.indexing.typemap.message": "text"}
    write_table(df.repartition(2, "part"), path, partition_by=("part",), options=opts)
    write_table(df.repartition(2), path, "append", partition_by=("part",), options=opts)
    df.unionAll(df).write.partitionBy("part").parquet(parquet)
    return path, parquet


def _check_search(spark: SparkSession, table: tuple[str, str], word: str) -> None:
    path, parquet = table
    got = read_table(spark, path).filter(F.col("message").contains(word))
    want = spark.read.parquet(parquet).filter(F.col("message").contains(word))
    assert_same_rows(got, want)
    assert got.count() > 0


def test_flush_searcher_cache_closes_pooled_searchers_and_reads_stay_right(
    spark: SparkSession, table: tuple[str, str]
) -> None:
    _check_search(spark, table, "alpha")
    rows = spark.sql("FLUSH INDEXTABLES SEARCHER CACHE").collect()
    assert [r.executor_id for r in rows] == ["driver"]  # local mode: one JVM
    assert rows[0].searchers_closed >= 1
    assert rows[0].cache_managers >= 1
    # Nothing is left to close; the next read opens searchers again and answers the same.
    (again,) = spark.sql("flush tantivy4spark searcher cache").collect()
    assert again.searchers_closed == 0
    _check_search(spark, table, "bravo")


def test_flush_searcher_cache_closes_the_rankers_open_splits(
    spark: SparkSession, table: tuple[str, str]
) -> None:
    spark.sql("FLUSH INDEXTABLES SEARCHER CACHE").collect()
    path, _ = table
    splits = read_table(spark, path).select("_split").distinct().count()
    spark.sql("FLUSH INDEXTABLES SEARCHER CACHE").collect()

    def top() -> list[int]:
        found = indextables.IndexTable.for_path(spark, path).search("alpha", k=1).collect()
        return [r.id for r in found]

    first = top()
    # The top 1 scored every split with the native ranker (on the driver), and read its row
    # from one split: each ranked split is closed with the pooled searchers.
    (flushed,) = spark.sql("FLUSH INDEXTABLES SEARCHER CACHE").collect()
    assert flushed.searchers_closed >= splits + 1, (flushed, splits)
    assert top() == first


def test_component_sizes_by_split_field_and_component(
    spark: SparkSession, table: tuple[str, str]
) -> None:
    path, _ = table
    rows = spark.sql(f"DESCRIBE INDEXTABLES COMPONENT SIZES '{path}'").collect()
    live = {r.path for r in spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()}
    assert {r.split_path for r in rows} == live and len(live) == 9
    # tantivy4java measures term dictionaries, postings, positions and the store per split,
    # fast fields and field norms per field.
    for split in live:
        sizes = {(r.field, r.component): r.size_bytes for r in rows if r.split_path == split}
        for total in ("term_total", "postings_total", "positions_total", "store"):
            assert sizes[(None, total)] > 0, (split, sizes)
        assert sizes[("id", "fastfield")] > 0 and sizes[("message", "fieldnorm")] > 0, sizes
    # WHERE keeps the splits of matching partitions only, compared as ints.
    one = spark.sql(f"DESCRIBE INDEXTABLES COMPONENT SIZES '{path}' WHERE part > 1").collect()
    assert {r.partition_values["part"] for r in one} == {"2"}
    assert {r.split_path for r in one} == {p for p in live if p.startswith("part=2/")}


def test_a_where_on_a_data_column_is_refused_naming_the_partition_columns(
    spark: SparkSession, table: tuple[str, str]
) -> None:
    path, _ = table
    with pytest.raises(Exception) as err:
        spark.sql(f"PREWARM INDEXTABLES CACHE '{path}' WHERE id = 3").collect()
    text = error_text(err.value)
    assert "INDEXTABLES_PARTITION_PREDICATE" in text and "[part]" in text
    assert isinstance(err.value, indextables.InvalidOptionError)
    # A clause that does not parse, or a condition naming no column, is refused by the same
    # partition predicate as MERGE SPLITS and DROP PARTITIONS use.
    for bad, fault in (("part >", "part >"), ("part = 1 AND 1 = 1", "every condition")):
        with pytest.raises(Exception) as err:
            spark.sql(f"DESCRIBE INDEXTABLES COMPONENT SIZES '{path}' WHERE {bad}").collect()
        text = error_text(err.value)
        assert "INDEXTABLES_INVALID_PARTITION_PREDICATE" in text and fault in text, text
        assert isinstance(err.value, indextables.InvalidOptionError)


def test_prewarm_warms_every_split_and_validates_segments_and_fields(
    spark: SparkSession, table: tuple[str, str]
) -> None:
    path, _ = table
    spark.sql("FLUSH INDEXTABLES SEARCHER CACHE").collect()
    (row,) = spark.sql(f"PREWARM INDEXTABLES CACHE '{path}'").collect()
    assert (row.executor_id, row.splits_prewarmed, row.splits_on_assigned_executor) == (
        "driver",
        9,
        9,
    )
    assert row.segments == "TERM,POSTINGS" and row.fields == "all"
    (row,) = spark.sql(
        f"PREWARM INDEXTABLES CACHE '{path}' FOR SEGMENTS (FAST_FIELD, doc_store) "
        "ON FIELDS (id) WITH PERWORKER PARALLELISM OF 3 WHERE part = 0"
    ).collect()
    assert (row.splits_prewarmed, row.segments, row.fields) == (3, "FASTFIELD,STORE", "id")
    for bad, expected in [
        ("FOR SEGMENTS (BLOOM)", "INDEXTABLES_UNKNOWN_INDEX_COMPONENT"),
        ("ON FIELDS (nosuch)", "INDEXTABLES_UNKNOWN_FIELD"),
    ]:
        with pytest.raises(Exception) as err:
            spark.sql(f"PREWARM INDEXTABLES CACHE '{path}' {bad}").collect()
        assert expected in error_text(err.value)
    _check_search(spark, table, "charlie")


def test_invalidate_transaction_log_cache_for_one_table_and_for_all(
    spark: SparkSession, table: tuple[str, str]
) -> None:
    path, _ = table
    read_table(spark, path).count()
    (row,) = spark.sql(f"INVALIDATE INDEXTABLES TRANSACTION LOG CACHE FOR '{path}'").collect()
    assert row.table_path == path and row.entries_invalidated >= 1
    (row,) = spark.sql(f"INVALIDATE INDEXTABLES TRANSACTION LOG CACHE FOR '{path}'").collect()
    assert row.entries_invalidated == 0
    read_table(spark, path).count()
    (row,) = spark.sql("INVALIDATE INDEXTABLES TRANSACTION LOG CACHE").collect()
    assert row.table_path == "all" and row.entries_invalidated >= 1
    _check_search(spark, table, "delta")


def test_describe_environment_gives_versions_and_redacts_secrets(spark: SparkSession) -> None:
    secret = "env-secret-0123456789"
    spark.conf.set("spark.indextables.aws.secretKey", secret)
    spark.conf.set("spark.indextables.azure.accountKey", secret)
    try:
        rows = spark.sql("DESCRIBE INDEXTABLES ENVIRONMENT").collect()
    finally:
        spark.conf.unset("spark.indextables.aws.secretKey")
        spark.conf.unset("spark.indextables.azure.accountKey")
    versions = {r.name: r.value for r in rows if r.source == "version"}
    assert set(versions) == {"indextables", "tantivy4java", "spark", "scala", "java"}
    assert versions["tantivy4java"] == "0.31.0" and versions["spark"] == spark.version
    settings = {r.name: r.value for r in rows if r.source == "spark"}
    assert settings["spark.sql.extensions"].startswith("io.indextables")
    assert settings["spark.indextables.aws.secretKey"] == "*********(redacted)"
    assert settings["spark.indextables.azure.accountKey"] == "*********(redacted)"
    assert all(secret not in str(r) for r in rows)


def test_describe_state_reports_the_checkpoint_and_compact_is_checkpoint(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    df = _rows(spark, 100).drop("part")
    write_table(df.coalesce(1), path)
    (before,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    assert before.checkpoint_version is None and before.checkpoint_format is None
    assert (before.tombstone_ratio, before.needs_compaction) == (0.0, False)
    # A table that owns its rows has no external source.
    assert (before.source_format, before.source_path, before.source_version) == (None, None, None)
    for _ in range(3):
        write_table(df.coalesce(1), path, "overwrite")
    (row,) = spark.sql(f"COMPACT INDEXTABLES '{path}'").collect()
    assert row.version == 3
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    assert (state.checkpoint_version, state.checkpoint_format) == (3, "avro-state")
    assert state.state_manifests >= 1
    # A compacted state holds no tombstones, though three overwrites removed three splits.
    assert (state.num_tombstones, state.tombstone_ratio, state.needs_compaction) == (3, 0.0, False)
    pointer = json.loads((tmp_path / "t" / "_transaction_log" / "_last_checkpoint").read_text())
    assert pointer["version"] == 3


def test_transaction_log_include_all_lists_every_action_of_every_version(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    df = _rows(spark, 50).drop("part")
    write_table(df.coalesce(1), path)
    write_table(df.coalesce(1), path, "overwrite")
    rows = spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}' INCLUDE ALL").collect()
    kinds = [(r.version, r.action_type) for r in rows]
    assert sorted(kinds[:3]) == [(0, "add"), (0, "metadata"), (0, "protocol")]
    assert sorted(kinds[3:]) == [(1, "add"), (1, "metadata"), (1, "remove")]  # overwrite
    added0 = next(r for r in rows if r.version == 0 and r.action_type == "add")
    removed = next(r for r in rows if r.action_type == "remove")
    assert removed.path == added0.path and removed.data_change is True
    assert added0.num_records == 50 and added0.footer_end_offset > 0
    protocol = next(r for r in rows if r.action_type == "protocol")
    assert "minReaderVersion=" in protocol.details and protocol.path is None
    live = spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()
    assert [r.path for r in live] == [
        r.path for r in rows if r.version == 1 and r.action_type == "add"
    ]


@pytest.fixture
def s3_table(spark: SparkSession, s3: S3Server, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A table of 3 splits on S3, its Parquet copy on disk, and the session set to reach S3."""
    conf = s3.conf()
    for k, v in conf.items():
        spark.conf.set(k, v)
    url = f"s3://{s3.new_bucket()}/t"
    parquet = str(tmp_path / "p")
    df = _rows(spark, 3000)
    write_table(
        df.repartition(3), url, options={"spark.indextables.indexing.typemap.message": "text"}
    )
    df.write.parquet(parquet)
    try:
        yield url, parquet
    finally:
        for k in conf:
            spark.conf.unset(k)
        for k in ("spark.indextables.cache.disk.path", "spark.indextables.cache.disk.enabled"):
            spark.conf.unset(k)


def _storage_requests(spark: SparkSession) -> int:
    (row,) = spark.sql("DESCRIBE INDEXTABLES STORAGE STATS").collect()
    return int(row.object_storage_requests)


def test_disk_cache_fills_from_s3_reads_and_flush_empties_it(
    spark: SparkSession, s3_table: tuple[str, str], tmp_path: Path
) -> None:
    disk = tmp_path / "l2"
    spark.conf.set("spark.indextables.cache.disk.path", str(disk))
    # No read has used this directory yet.
    assert not [
        r for r in spark.sql("DESCRIBE INDEXTABLES DISK CACHE").collect() if r.path == str(disk)
    ]
    before = _storage_requests(spark)
    _check_search(spark, s3_table, "echo")
    assert _storage_requests(spark) > before  # the splits were read from S3
    reports = [r for r in spark.sql("DESCRIBE INDEXTABLES DISK CACHE").collect() if r.enabled]
    ours = [r for r in reports if r.path == str(disk)]
    assert len(ours) == 1 and ours[0].total_bytes > 0 and ours[0].splits_cached >= 1, reports
    assert any(p.is_file() for p in disk.rglob("*")), "nothing was written to the disk cache"
    (flushed,) = spark.sql("FLUSH INDEXTABLES DISK CACHE").collect()
    assert flushed.disk_caches_flushed >= 1 and flushed.disk_cache_bytes_freed > 0
    assert not any(p.is_file() for p in disk.rglob("*")), "the disk cache still holds files"
    assert not [r for r in spark.sql("DESCRIBE INDEXTABLES DISK CACHE").collect() if r.enabled]
    # The next read makes a new disk cache in the same place, and fills it again.
    _check_search(spark, s3_table, "foxtrot")
    assert any(p.is_file() for p in disk.rglob("*"))


def test_flush_disk_cache_leaves_reads_through_every_other_manager_right(
    spark: SparkSession,
    s3_table: tuple[str, str],
    tmp_path: Path,
    logs_table: str,
    logs_parquet: DataFrame,
) -> None:
    """FLUSH DISK CACHE closes the disk-cached managers, and tantivy4java may then clear its
    process-wide caches (split schemas, searcher contexts). A local table read through a manager
    without a disk cache, before and after the flush, must answer as Parquet does; the leaf-search
    cache is bypassed, so each answer is searched again."""
    spark.conf.set("spark.indextables.cache.disk.path", str(tmp_path / "l2"))
    _check_search(spark, s3_table, "echo")  # a disk-cached manager, for the S3 table
    for k in ("spark.indextables.cache.disk.path", "spark.indextables.cache.disk.enabled"):
        spark.conf.unset(k)
    spark.conf.set("spark.indextables.cache.queryCache.enabled", "false")

    def check() -> None:
        for where in ("level = 'ERROR'", "status >= 500"):
            got = read_table(spark, logs_table).filter(where)
            want = logs_parquet.filter(where)
            assert got.count() == want.count() > 0, where
            assert_same_rows(got.groupBy("component").count(), want.groupBy("component").count())
            assert_same_rows(
                got.select("id", "level", "status"), want.select("id", "level", "status")
            )

    try:
        check()
        (flushed,) = spark.sql("FLUSH INDEXTABLES DISK CACHE").collect()
        assert flushed.disk_caches_flushed >= 1
        check()
    finally:
        spark.conf.unset("spark.indextables.cache.queryCache.enabled")


def test_prewarm_on_s3_saves_the_reads_a_query_would_make(
    spark: SparkSession, s3_table: tuple[str, str]
) -> None:
    url, _ = s3_table
    # Cold: no searcher, nothing cached; a term query fetches its index pages from S3.
    spark.sql("FLUSH INDEXTABLES SEARCHER CACHE").collect()
    start = _storage_requests(spark)
    _check_search_term(spark, s3_table, "golf")
    cold = _storage_requests(spark) - start
    spark.sql("FLUSH INDEXTABLES SEARCHER CACHE").collect()
    (row,) = spark.sql(
        f"PREWARM INDEXTABLES CACHE '{url}' FOR SEGMENTS "
        "(TERM_DICT, POSTINGS, POSITIONS, FIELD_NORM, FAST_FIELD, DOC_STORE)"
    ).collect()
    assert row.splits_prewarmed == 3
    start = _storage_requests(spark)
    _check_search_term(spark, s3_table, "hotel")  # another term: not the leaf-search cache
    warm = _storage_requests(spark) - start
    assert cold > 0 and warm < cold, (cold, warm)


def _check_search_term(spark: SparkSession, table: tuple[str, str], word: str) -> None:
    path, parquet = table
    got = read_table(spark, path).filter(f"message indexquery '{word}'")
    want = spark.read.parquet(parquet).filter(F.col("message").contains(word))
    assert_same_rows(got, want)


def test_a_malformed_cache_command_fails_naming_the_position(spark: SparkSession) -> None:
    with pytest.raises(Exception) as err:
        spark.sql("FLUSH INDEXTABLES CACHE").collect()
    text = error_text(err.value)
    assert "INDEXTABLES_COMMAND_SYNTAX_ERROR" in text and "line 1" in text, text
