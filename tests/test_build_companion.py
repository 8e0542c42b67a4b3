"""BUILD INDEXTABLES COMPANION FOR PARQUET end to end, as users run it.

A folder of Parquet files written by Spark (Hive-partitioned or not) is indexed into a companion
index at another location without copying a row; every answer read through the index is compared
with `spark.read.parquet` on the same folder, and the route each scan took (a search pushed to
the index, or the Parquet route) is read from the physical plan. Reruns index only what changed;
bad input fails with an error naming what is at fault.
"""

from __future__ import annotations

import datetime as dt
import random
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from helpers import FORMAT, assert_same_rows, read_table, split_files
from indextables.exceptions import IndexTablesError

WORDS = ["timeout", "connection", "reset", "disk", "full", "error", "served", "retry", "lock"]
LEVELS = ["ERROR", "WARN", "INFO", None]
DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]

SCHEMA = StructType(
    [
        StructField("id", LongType(), False),
        StructField("msg", StringType(), True),
        StructField("host", StringType(), True),
        StructField("level", StringType(), True),
        StructField("ip", StringType(), True),
        StructField("latency", DoubleType(), True),
        StructField("status", IntegerType(), True),
        StructField("ts", TimestampType(), True),
        StructField("tags", ArrayType(StringType()), True),
        StructField("day", StringType(), True),
    ]
)


def make_rows(
    n: int, seed: int, first_id: int = 0, days: list[str] = DAYS
) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)
    rows = []
    for i in range(first_id, first_id + n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 6))]
        rows.append(
            (
                i,
                None if i % 13 == 0 else " ".join(words),
                f"host-{rng.randint(0, 9)}",
                rng.choice(LEVELS),
                f"10.0.{rng.randint(0, 3)}.{rng.randint(1, 254)}",
                None if i % 11 == 0 else round(rng.uniform(0, 500), 3),
                rng.choice([200, 404, 500]),
                dt.datetime(2024, 1, 1) + dt.timedelta(seconds=rng.randint(0, 86400 * 3)),
                [rng.choice(WORDS) for _ in range(rng.randint(0, 3))],
                rng.choice(days),
            )
        )
    return rows


def write_parquet(
    spark: SparkSession, rows: list[tuple[Any, ...]], path: Path, partitioned: bool, files: int = 3
) -> None:
    df = spark.createDataFrame(rows, SCHEMA).repartition(files)
    writer = df.write.mode("append")
    if partitioned:
        writer = writer.partitionBy("day")
    writer.parquet(str(path))


def build(spark: SparkSession, source: Path | str, index: Path | str, clauses: str = "") -> Row:
    rows = spark.sql(
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}' {clauses}"
    ).collect()
    assert len(rows) == 1
    return rows[0]


def plan_of(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def parquet_files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*.parquet") if not p.name.startswith("."))


def versions(index: Path) -> list[Path]:
    return sorted((index / "_transaction_log").glob("*.json"))


def error_class_of(spark: SparkSession, sql: str) -> IndexTablesError:
    with pytest.raises(IndexTablesError) as e:
        spark.sql(sql).collect()
    return e.value


@pytest.fixture(scope="module")
def partitioned(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A Hive-partitioned source (day=...) and its companion index, built once."""
    root = tmp_path_factory.mktemp("companion-partitioned")
    source, index = root / "source", root / "index"
    write_parquet(spark, make_rows(600, seed=1), source, partitioned=True)
    result = build(spark, source, index, "INDEXING MODES (msg: 'text', ip: 'ip')")
    assert result.status == "success"
    assert result.parquet_files_indexed == len(parquet_files(source))
    assert result.splits_created == len(split_files(str(index)))
    assert result.splits_invalidated == 0
    assert result.version == 0
    return source, index


def test_a_partitioned_source_reads_as_parquet_reads_it(
    spark: SparkSession, partitioned: tuple[Path, Path]
) -> None:
    source, index = partitioned
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    # The partition column is typed as Spark types it (day=2024-01-01 is a date).
    assert idx.schema == pq.schema, (idx.schema.simpleString(), pq.schema.simpleString())
    assert_same_rows(idx, pq)
    assert "Route: parquet" in plan_of(idx)


def test_a_term_filter_is_searched_in_the_index(
    spark: SparkSession, partitioned: tuple[Path, Path]
) -> None:
    source, index = partitioned
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    # (A double range is pushed with both bounds only: see FiltersToQueryConverter.)
    in_range = (F.col("latency") > 250) & (F.col("latency") < 400)
    for condition in (F.col("host") == "host-3", F.col("status") == 404, in_range):
        found = idx.where(condition)
        assert "PushedQuery" in plan_of(found)
        assert "Route: parquet" not in plan_of(found)
        assert_same_rows(found, pq.where(condition))


def test_an_indexquery_on_a_text_column_is_searched(
    spark: SparkSession, partitioned: tuple[Path, Path]
) -> None:
    source, index = partitioned
    read_table(spark, str(index)).createOrReplaceTempView("companion_logs")
    spark.read.parquet(str(source)).createOrReplaceTempView("companion_logs_parquet")
    found = spark.sql("SELECT * FROM companion_logs WHERE msg indexquery 'timeout AND lock'")
    assert "PushedQuery" in plan_of(found)
    words = "array_contains(split(lower(msg), ' '), '{}')"
    expected = spark.sql(
        "SELECT * FROM companion_logs_parquet WHERE "
        + " AND ".join(words.format(w) for w in ("timeout", "lock"))
    )
    assert expected.count() > 0
    assert_same_rows(found, expected)


def test_an_ip_column_is_searched_as_addresses(
    spark: SparkSession, partitioned: tuple[Path, Path]
) -> None:
    source, index = partitioned
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    condition = F.col("ip") == "10.0.1.7"
    assert_same_rows(idx.where(condition), pq.where(condition))


def test_a_partition_filter_prunes_and_reads_parquet(
    spark: SparkSession, partitioned: tuple[Path, Path]
) -> None:
    source, index = partitioned
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    condition = F.col("day") == F.lit(dt.date(2024, 1, 2))
    found = idx.where(condition)
    plan = plan_of(found)
    assert "Route: parquet" in plan
    assert_same_rows(found, pq.where(condition))
    # With a search too: the partition prunes, the index answers the rest.
    both = (F.col("day") >= F.lit(dt.date(2024, 1, 2))) & (F.col("level") == "ERROR")
    assert "PushedQuery" in plan_of(idx.where(both))
    assert_same_rows(idx.where(both), pq.where(both))


def test_count_and_group_by_match_parquet(
    spark: SparkSession, partitioned: tuple[Path, Path]
) -> None:
    source, index = partitioned
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    assert idx.count() == pq.count()
    assert_same_rows(idx.groupBy("level").count(), pq.groupBy("level").count())
    assert_same_rows(idx.groupBy("day").count(), pq.groupBy("day").count())
    filtered = F.col("status") == 500
    assert_same_rows(
        idx.where(filtered).groupBy("host").agg(F.count("*"), F.max("latency")),
        pq.where(filtered).groupBy("host").agg(F.count("*"), F.max("latency")),
    )


def test_an_unpartitioned_source(spark: SparkSession, tmp_path: Path) -> None:
    source, index = tmp_path / "source", tmp_path / "index"
    write_parquet(spark, make_rows(300, seed=2), source, partitioned=False, files=2)
    result = build(spark, source, index, "INDEXING MODES ('msg':'text') TARGET INPUT SIZE 1")
    # Each file is bigger than the target input size: a split per file.
    assert result.splits_created == len(parquet_files(source)) == 2
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    assert_same_rows(idx, pq)
    condition = F.col("level") == "WARN"
    assert "PushedQuery" in plan_of(idx.where(condition))
    assert_same_rows(idx.where(condition), pq.where(condition))


def test_a_rerun_indexes_new_files_and_drops_splits_of_deleted_ones(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "source", tmp_path / "index"
    write_parquet(spark, make_rows(300, seed=3), source, partitioned=True, files=2)
    first = build(spark, source, index, "INDEXING MODES (msg: 'text')")
    assert first.status == "success"
    before = set(parquet_files(source))

    # New files: in an existing partition and in a new one.
    write_parquet(
        spark,
        make_rows(100, seed=4, first_id=1000, days=["2024-01-01", "2024-01-04"]),
        source,
        partitioned=True,
        files=2,
    )
    added = set(parquet_files(source)) - before
    second = build(spark, source, index)
    assert (second.status, second.parquet_files_indexed, second.splits_invalidated) == (
        "success",
        len(added),
        0,
    )
    assert second.version == 1
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    assert_same_rows(idx, pq)
    assert_same_rows(idx.where(F.col("id") >= 1000), pq.where(F.col("id") >= 1000))

    # A file gone: its split goes, and that split's other files are indexed again.
    gone = sorted(added)[0]
    gone.unlink()
    third = build(spark, source, index)
    assert third.status == "success"
    assert third.splits_invalidated == 1
    # The second run made one split per partition, so the others of its partition come back.
    assert third.parquet_files_indexed == len([p for p in added if p.parent == gone.parent]) - 1
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    assert_same_rows(idx, pq)
    assert_same_rows(idx.where(F.col("host") == "host-1"), pq.where(F.col("host") == "host-1"))

    # Nothing changed: nothing to do, nothing committed.
    fourth = build(spark, source, index)
    assert (fourth.status, fourth.splits_created, fourth.version) == ("no_action", 0, None)
    assert len(versions(index)) == 3


def test_a_source_file_rewritten_in_place_is_refused_then_reindexed(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "source", tmp_path / "index"
    write_parquet(spark, make_rows(200, seed=5), source, partitioned=False, files=2)
    assert build(spark, source, index, "INDEXING MODES (msg: 'text')").status == "success"
    target = parquet_files(source)[0]
    recorded = target.stat().st_size
    # The same path now holds other rows (and other bytes).
    other = tmp_path / "other"
    write_parquet(spark, make_rows(40, seed=6, first_id=5000), other, partitioned=False, files=1)
    (replacement,) = parquet_files(other)
    assert replacement.stat().st_size != recorded
    target.write_bytes(replacement.read_bytes())
    # Hadoop's checksum of the old bytes would fail Spark's own read of the folder.
    (target.parent / f".{target.name}.crc").unlink(missing_ok=True)

    # Until the index is rebuilt, reads refuse the file rather than serve rows it never indexed.
    idx = read_table(spark, str(index))
    for query in (idx, idx.where(F.col("host") == "host-1")):
        with pytest.raises(IndexTablesError) as refused:
            query.collect()
        assert refused.value.error_class == "INDEXTABLES_COMPANION_FILE_CHANGED"
        assert target.name in str(refused.value) and str(recorded) in str(refused.value)

    rerun = build(spark, source, index)
    assert (rerun.status, rerun.splits_invalidated) == ("success", 1)
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    assert_same_rows(idx, pq)
    assert_same_rows(idx.where(F.col("id") >= 5000), pq.where(F.col("id") >= 5000))
    assert idx.where(F.col("id") >= 5000).count() == 40


def test_same_named_files_of_two_partitions_stay_apart_in_the_disk_cache(
    spark: SparkSession, tmp_path: Path
) -> None:
    # Spark names a job's files alike in every partition (part-00000-<job>.c000...), and
    # tantivy4java's disk cache keys Parquet bytes by root and file name: each split's files
    # are named under their own directory, so one partition's bytes never answer another's.
    source, index = tmp_path / "source", tmp_path / "index"
    write_parquet(spark, make_rows(600, seed=7), source, partitioned=True, files=2)
    names = [p.name for p in parquet_files(source)]
    assert len(names) > len(set(names)), "the source should repeat file names across partitions"
    assert build(spark, source, index, "INDEXING MODES (msg: 'text')").status == "success"
    spark.conf.set("spark.indextables.cache.disk.path", str(tmp_path / "l2"))
    spark.conf.set("spark.indextables.cache.disk.enabled", "true")
    try:
        idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
        for host in ("host-1", "host-2"):
            assert_same_rows(idx.where(F.col("host") == host), pq.where(F.col("host") == host))
        assert_same_rows(
            idx.where(F.expr("msg indexquery 'timeout'")), pq.where(F.col("msg").rlike("timeout"))
        )
    finally:
        spark.sql("FLUSH INDEXTABLES DISK CACHE").collect()
        spark.conf.unset("spark.indextables.cache.disk.path")
        spark.conf.unset("spark.indextables.cache.disk.enabled")


def test_dry_run_reports_and_commits_nothing(spark: SparkSession, tmp_path: Path) -> None:
    source, index = tmp_path / "source", tmp_path / "index"
    write_parquet(spark, make_rows(200, seed=5), source, partitioned=True, files=2)
    dry = build(spark, source, index, "DRY RUN")
    files = len(parquet_files(source))
    assert (dry.status, dry.parquet_files_indexed, dry.version) == ("dry_run", files, None)
    assert dry.splits_created > 0
    assert not (index / "_transaction_log").exists()
    assert split_files(str(index)) == []

    build(spark, source, index)
    (next(iter(parquet_files(source)))).unlink()
    again = build(spark, source, index, "DRY RUN")
    assert (again.status, again.splits_invalidated) == ("dry_run", 1)
    assert len(versions(index)) == 1


def test_where_indexes_only_the_partitions_it_names(spark: SparkSession, tmp_path: Path) -> None:
    source, index = tmp_path / "source", tmp_path / "index"
    write_parquet(spark, make_rows(300, seed=6), source, partitioned=True, files=2)
    build(spark, source, index, "WHERE day = '2024-01-02'")
    condition = F.col("day") == F.lit(dt.date(2024, 1, 2))
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    assert_same_rows(idx, pq.where(condition))
    # A later build of the rest keeps the first partition's splits.
    rest = build(spark, source, index, "WHERE day <> '2024-01-02'")
    assert (rest.status, rest.splits_invalidated) == ("success", 0)
    assert_same_rows(read_table(spark, str(index)), pq)


def test_excluded_columns_are_read_not_searched(spark: SparkSession, tmp_path: Path) -> None:
    source, index = tmp_path / "source", tmp_path / "index"
    write_parquet(spark, make_rows(200, seed=7), source, partitioned=False, files=1)
    build(spark, source, index, "INCLUDE COLUMNS (id, msg, host, level) EXCLUDE COLUMNS (level)")
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    assert_same_rows(idx, pq)
    # level is not indexed: Spark filters it, on the Parquet route.
    on_level = F.col("level") == "INFO"
    assert "Route: parquet" in plan_of(idx.where(on_level))
    assert_same_rows(idx.where(on_level), pq.where(on_level))
    # A search on an indexed column still reads every column, the excluded ones from Parquet.
    on_host = F.col("host") == "host-2"
    assert "PushedQuery" in plan_of(idx.where(on_host))
    assert_same_rows(idx.where(on_host), pq.where(on_host))
    # A rerun that asks for other columns fails, naming the clause.
    e = error_class_of(
        spark,
        f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}' "
        "EXCLUDE COLUMNS (host)",
    )
    assert e.error_class == "INDEXTABLES_COMPANION_INDEXING_CHANGED"
    assert "INCLUDE / EXCLUDE COLUMNS" in str(e)


def test_a_write_into_the_index_fails(spark: SparkSession, partitioned: tuple[Path, Path]) -> None:
    source, index = partitioned
    rows = spark.read.parquet(str(source)).limit(5)
    for mode in ("append", "overwrite"):
        with pytest.raises(IndexTablesError) as e:
            rows.write.format(FORMAT).mode(mode).save(str(index))
        assert e.value.error_class == "INDEXTABLES_COMPANION_INDEX_READ_ONLY"
        assert str(source.name) in str(e.value) and "BUILD INDEXTABLES COMPANION" in str(e.value)
    assert_same_rows(read_table(spark, str(index)), spark.read.parquet(str(source)))


def test_delete_update_and_merge_on_the_index_fail_naming_the_source(
    spark: SparkSession, partitioned: tuple[Path, Path]
) -> None:
    """The index's rows are the source's: a row-level statement on it is refused, saying to
    change the source and build again, and changes nothing."""
    source, index = partitioned
    name = f"indextables.`{index}`"
    spark.read.parquet(str(source)).limit(3).createOrReplaceTempView("changes")
    column = spark.read.parquet(str(source)).columns[0]
    for statement in (
        f"DELETE FROM {name} WHERE {column} IS NOT NULL",
        f"UPDATE {name} SET {column} = {column} WHERE {column} IS NOT NULL",
        f"MERGE INTO {name} t USING changes s ON t.{column} = s.{column} WHEN MATCHED THEN DELETE",
    ):
        with pytest.raises(IndexTablesError) as e:
            spark.sql(statement).collect()
        assert e.value.error_class == "INDEXTABLES_COMPANION_INDEX_READ_ONLY", statement
        assert str(source.name) in str(e.value) and "BUILD INDEXTABLES COMPANION" in str(e.value)
    assert_same_rows(read_table(spark, str(index)), spark.read.parquet(str(source)))


def test_a_missing_or_empty_source_is_named(spark: SparkSession, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    e = error_class_of(
        spark, f"BUILD INDEXTABLES COMPANION FOR PARQUET '{missing}' AT LOCATION '{tmp_path}/i'"
    )
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_NOT_FOUND"
    assert str(missing) in str(e)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "_SUCCESS").write_text("")
    e = error_class_of(
        spark, f"BUILD INDEXTABLES COMPANION FOR PARQUET '{empty}' AT LOCATION '{tmp_path}/i'"
    )
    assert e.error_class == "INDEXTABLES_COMPANION_SOURCE_EMPTY"
    assert str(empty) in str(e)
    assert not (tmp_path / "i").exists()


def test_a_column_the_index_cannot_hold_is_named(spark: SparkSession, tmp_path: Path) -> None:
    source, index = tmp_path / "source", tmp_path / "index"
    schema = StructType([StructField("id", LongType()), StructField("amount", DecimalType(30, 2))])
    rows = [(i, Decimal(f"{i}12345678901234567.25")) for i in range(20)]
    spark.createDataFrame(rows, schema).coalesce(1).write.parquet(str(source))
    sql = f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}'"
    e = error_class_of(spark, sql)
    assert e.error_class == "INDEXTABLES_COMPANION_UNSUPPORTED_COLUMN"
    assert "'amount'" in str(e) and "decimal(30,2)" in str(e)
    # Left out of the index it would still come back through tantivy4java, as a double, on
    # every search: so it is refused all the same.
    e = error_class_of(spark, f"{sql} EXCLUDE COLUMNS (amount)")
    assert e.error_class == "INDEXTABLES_COMPANION_UNSUPPORTED_COLUMN"
    assert not index.exists()


def test_a_source_whose_schema_changed_fails_and_commits_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "source", tmp_path / "index"
    write_parquet(spark, make_rows(100, seed=8), source, partitioned=False, files=1)
    build(spark, source, index)
    spark.createDataFrame([(1, "x")], "id BIGINT, other STRING").write.mode("append").parquet(
        str(source)
    )
    new = next(
        p for p in parquet_files(source) if spark.read.parquet(str(p)).columns == ["id", "other"]
    )
    e = error_class_of(
        spark, f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}'"
    )
    assert e.error_class == "INDEXTABLES_COMPANION_SCHEMA_CHANGED"
    assert new.name in str(e) and "other" in str(e)
    assert len(versions(index)) == 1
    assert len(split_files(str(index))) == 1


def test_unknown_clauses_modes_and_columns_are_named(
    spark: SparkSession, partitioned: tuple[Path, Path]
) -> None:
    source, index = partitioned
    head = f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}'"
    cases = {
        f"{head} HASHED FASTFIELDS INCLUDE ('msg')": (
            "INDEXTABLES_COMPANION_UNKNOWN_OPTION",
            "HASHED",
        ),
        f"{head} INDEXING MODES (msg: 'fulltext')": (
            "INDEXTABLES_COMPANION_UNKNOWN_INDEXING_MODE",
            "fulltext",
        ),
        f"{head} INDEXING MODES (message: 'text')": (
            "INDEXTABLES_COMPANION_UNKNOWN_COLUMN",
            "'message'",
        ),
        f"{head} FASTFIELDS MODE FAST": ("INDEXTABLES_COMPANION_INVALID_OPTION", "FAST"),
        f"{head} FASTFIELDS MODE PARQUET_ONLY": (
            "INDEXTABLES_COMPANION_INVALID_OPTION",
            "PARQUET_ONLY",
        ),
        f"{head} TARGET INPUT SIZE lots": ("INDEXTABLES_COMPANION_INVALID_OPTION", "lots"),
        f"{head} WHERE level = 'ERROR'": ("INDEXTABLES_PARTITION_PREDICATE", "level"),
        f"BUILD INDEXTABLES COMPANION FOR HUDI '{source}' AT LOCATION '{index}'": (
            "INDEXTABLES_COMPANION_INVALID_OPTION",
            "HUDI",
        ),
        f"BUILD INDEXTABLES COMPANION FOR ICEBERG '{source}' AT LOCATION '{index}'": (
            "INDEXTABLES_COMPANION_TARGET_MISMATCH",
            "of format parquet, not iceberg",
        ),
        f"BUILD INDEXTABLES COMPANION FOR DELTA '{source}' AT LOCATION '{index}'": (
            "INDEXTABLES_COMPANION_TARGET_MISMATCH",
            "of format parquet, not delta",
        ),
    }
    for sql, (error_class, named) in cases.items():
        e = error_class_of(spark, sql)
        assert e.error_class == error_class, (sql, str(e))
        assert named in str(e), (sql, str(e))
    assert len(versions(index)) == 1


def test_two_builds_racing_on_one_index_never_index_a_row_twice(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "source", tmp_path / "index"
    write_parquet(spark, make_rows(400, seed=9), source, partitioned=True, files=3)
    outcomes: list[str] = []
    errors: list[IndexTablesError] = []

    def run() -> None:
        try:
            outcomes.append(build(spark, source, index, "TARGET INPUT SIZE 1").status)
        except IndexTablesError as e:
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert "success" in outcomes
    assert len(outcomes) + len(errors) == 2
    # The loser either found the work done, or lost the commit and deleted what it made.
    assert set(outcomes) <= {"success", "no_action"}
    for e in errors:
        assert e.error_class == "INDEXTABLES_COMPANION_BUILD_CONFLICT", str(e)
    assert outcomes.count("success") == 1
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    assert_same_rows(idx, pq)
    # One split per file (TARGET INPUT SIZE 1), none left behind by the loser.
    assert len(split_files(str(index))) == len(parquet_files(source))
    # A rerun finds the index complete.
    assert build(spark, source, index).status == "no_action"


def test_merge_splits_keeps_the_rows_of_a_companion_index(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Regression: a merged split lost its companionSourceFiles, and the index read no row."""
    source, index = tmp_path / "source", tmp_path / "index"
    write_parquet(spark, make_rows(300, seed=10), source, partitioned=False, files=3)
    assert build(spark, source, index, "TARGET INPUT SIZE 1").splits_created == 3
    merged = spark.sql(f"MERGE SPLITS '{index}'").collect()[0]
    assert merged.metrics.merge_groups == 1
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    assert_same_rows(idx, pq)
    assert_same_rows(idx.where(F.col("host") == "host-4"), pq.where(F.col("host") == "host-4"))
    # The merged split indexes every file: nothing to do.
    assert build(spark, source, index).status == "no_action"


def test_the_index_stays_a_companion_index_after_a_checkpoint(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Regression: an Avro state holds no protocol, and a snapshot read from one lost the
    companion feature: reads then searched the splits as if they held the rows, and failed."""
    source, index = tmp_path / "source", tmp_path / "index"
    spark.conf.set("spark.indextables.checkpoint.interval", "1")
    try:
        write_parquet(spark, make_rows(100, seed=11), source, partitioned=True, files=1)
        build(spark, source, index)
        write_parquet(spark, make_rows(50, seed=12, first_id=500), source, partitioned=True)
        assert build(spark, source, index).version == 1
    finally:
        spark.conf.unset("spark.indextables.checkpoint.interval")
    assert list((index / "_transaction_log").glob("state-v*"))
    spark.sql(f"INVALIDATE INDEXTABLES TRANSACTION LOG CACHE FOR '{index}'").collect()
    idx, pq = read_table(spark, str(index)), spark.read.parquet(str(source))
    assert "Route: parquet" in plan_of(idx)
    assert_same_rows(idx, pq)
    assert_same_rows(idx.where(F.col("host") == "host-5"), pq.where(F.col("host") == "host-5"))
