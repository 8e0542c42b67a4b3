"""Appends that add columns (mergeSchema), and the index kind of each column read from each
split's own doc mapping rather than from typemap entries in the table's metadata.

Oracles: the same appends on Parquet (read with mergeSchema) and the rows themselves.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

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

pytestmark = pytest.mark.usefixtures("layout")

MERGE_SCHEMA = "spark.indextables.write.mergeSchema"


def _versions(spark: SparkSession, path: str) -> list[int]:
    return [r.version for r in spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{path}'").collect()]


def _write_log(path: str, version: int, actions: list[dict[str, Any]]) -> None:
    """Rewrite a version file as plain JSON lines (which every reader of the format accepts)."""
    text = "\n".join(json.dumps(a) for a in actions) + "\n"
    (Path(path) / "_transaction_log" / f"{version:020d}.json").write_text(text)


def _forget_cached_logs(spark: SparkSession) -> None:
    jvm(spark).io.indextables.spark.transaction.TransactionLog.clearCache()


@pytest.fixture
def base(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(
        [(i, f"host{i % 4}", f"connection reset by peer {i}") for i in range(50)],
        "id long, host string, message string",
    )


@pytest.fixture
def added(spark: SparkSession) -> DataFrame:
    rows = [
        (i, f"host{i % 4}", f"disk full on volume {i}", None if i % 3 == 0 else f"dc{i % 2}", i * 2)
        for i in range(50, 90)
    ]
    return spark.createDataFrame(
        rows, "id long, host string, message string, region string, code int"
    )


def test_merge_schema_adds_nullable_columns_that_older_splits_read_as_null(
    spark: SparkSession, base: DataFrame, added: DataFrame, tmp_table: str, tmp_path: Path
) -> None:
    write_table(base, tmp_table, options={TYPEMAP + "message": "text"})
    write_table(added, tmp_table, mode="append", options={"mergeSchema": "true"})
    parquet = str(tmp_path / "parquet")
    base.write.parquet(parquet)
    added.write.mode("append").parquet(parquet)
    oracle = spark.read.option("mergeSchema", "true").parquet(parquet)
    table = read_table(spark, tmp_table)
    assert table.columns == ["id", "host", "message", "region", "code"]
    assert [f.nullable for f in table.schema.fields[3:]] == [True, True]
    assert_same_rows(table, oracle)
    for cond in [
        F.col("region").isNull(),
        F.col("region").isNotNull(),
        F.col("region") == "dc1",
        ~(F.col("region") == "dc1"),
        F.col("code") > 100,
        F.col("code").isin(102, 104),
        (F.col("region") == "dc0") | (F.col("id") < 3),
        F.col("region").isNull() & F.col("message").contains("reset"),
    ]:
        assert_same_rows(table.filter(cond), oracle.filter(cond))
    # Each split keeps its own doc mapping: two distinct mappings, the old one without region.
    refs = {
        a["add"]["docMappingRef"]
        for v in (0, 1)
        for a in version_actions(tmp_table, v)
        if "add" in a
    }
    assert len(refs) == 2
    # A search on the new column, and an IndexQuery naming it, leave the old splits' rows out.
    table.createOrReplaceTempView("evolved")
    got = spark.sql("SELECT id FROM evolved WHERE region indexquery 'dc1'").collect()
    assert sorted(r.id for r in got) == sorted(
        r.id for r in oracle.filter(F.col("region") == "dc1").collect()
    )
    got = spark.sql("SELECT id FROM evolved WHERE message indexquery 'disk'").collect()
    assert len(got) == 40


def test_the_session_setting_also_merges_and_the_next_append_needs_nothing(
    spark: SparkSession, base: DataFrame, added: DataFrame, tmp_table: str
) -> None:
    write_table(base, tmp_table)
    spark.conf.set(MERGE_SCHEMA, "true")
    try:
        write_table(added, tmp_table, mode="append")
    finally:
        spark.conf.unset(MERGE_SCHEMA)
    write_table(added.withColumn("id", F.col("id") + 100), tmp_table, mode="append")
    assert read_table(spark, tmp_table).count() == 130
    meta = next(a["metaData"] for a in version_actions(tmp_table, 1) if "metaData" in a)
    assert [f["name"] for f in json.loads(str(meta["schemaString"]))["fields"]] == [
        "id",
        "host",
        "message",
        "region",
        "code",
    ]


def test_schema_differences_fail_naming_them_and_commit_nothing(
    spark: SparkSession, base: DataFrame, added: DataFrame, tmp_table: str
) -> None:
    write_table(base, tmp_table)
    cases = [
        (added, {}, ["region", "code", "mergeSchema"]),
        (base.withColumn("id", F.col("id").cast("string")), {"mergeSchema": "true"},
         ["'id'", "bigint", "string"]),
        (base.drop("host"), {"mergeSchema": "true"}, ["'host'"]),
    ]  # fmt: skip
    for df, options, named in cases:
        with pytest.raises(Exception) as err:
            write_table(df, tmp_table, mode="append", options=options)
        text = error_text(err.value)
        assert "INDEXTABLES_SCHEMA_MISMATCH" in text
        for name in named:
            assert name in text, (name, text)
    assert _versions(spark, tmp_table) == [0]
    assert len(split_files(tmp_table)) == len(
        [a for a in version_actions(tmp_table, 0) if "add" in a]
    )
    assert_same_rows(read_table(spark, tmp_table), base)


def test_replace_where_with_a_new_column_keeps_the_other_rows_null_there(
    spark: SparkSession, base: DataFrame, added: DataFrame, tmp_table: str
) -> None:
    write_table(base, tmp_table, options={"spark.indextables.maxRowsPerSplit": "20"})
    new = added.filter(F.col("id") < 60).withColumn("id", F.col("id") - 50)
    write_table(
        new,
        tmp_table,
        mode="overwrite",
        options={"replaceWhere": "id < 10", "mergeSchema": "true"},
    )
    expected = (
        base.filter(F.col("id") >= 10)
        .selectExpr("*", "CAST(NULL AS string) AS region", "CAST(NULL AS int) AS code")
        .unionByName(new)
    )
    assert_same_rows(read_table(spark, tmp_table), expected)


def test_index_kinds_come_from_the_splits_doc_mappings_not_the_typemap_entries(
    spark: SparkSession, base: DataFrame, tmp_table: str
) -> None:
    write_table(
        base,
        tmp_table,
        options={TYPEMAP + "message": "text", "spark.indextables.checkpoint.enabled": "false"},
    )
    table = read_table(spark, tmp_table)
    table.createOrReplaceTempView("typed")
    queries = [
        "SELECT id FROM typed WHERE message indexquery 'peer'",
        "SELECT id FROM typed WHERE message = 'connection reset by peer 7'",
        "SELECT id FROM typed WHERE message LIKE '%reset by%'",
        "SELECT id FROM typed WHERE host = 'host1'",
    ]
    before = [sorted(r.id for r in spark.sql(q).collect()) for q in queries]
    assert [len(ids) for ids in before] == [50, 1, 50, 13]
    # Remove every typemap entry from the log, as IndexTables 0.5.4 never writes them.
    actions = version_actions(tmp_table, 0)
    for a in actions:
        if "metaData" in a:
            conf = a["metaData"]["configuration"]
            assert isinstance(conf, dict)
            a["metaData"]["configuration"] = {
                k: v for k, v in conf.items() if not k.startswith(TYPEMAP)
            }
    _write_log(tmp_table, 0, actions)
    _forget_cached_logs(spark)
    table = read_table(spark, tmp_table)
    table.createOrReplaceTempView("typed")
    after = [sorted(r.id for r in spark.sql(q).collect()) for q in queries]
    assert after == before
    # The text column still takes token queries (Spark re-checks them), not exact terms.
    plan = scan_node(spark.sql(queries[1]))
    assert '"type":"term","field":"message","value":"connection reset by peer 7"' not in plan
    # An append keeps the column's kind from the splits: "peer" is still a word of it.
    write_table(base.withColumn("id", F.col("id") + 50), tmp_table, mode="append")
    got = spark.sql("SELECT id FROM typed WHERE message indexquery 'peer'").collect()
    assert len(got) == 100


def test_splits_indexed_differently_are_each_searched_their_own_way(
    spark: SparkSession, base: DataFrame, tmp_path: Path
) -> None:
    """A table whose splits hold one column as text in some and as string in others (written by
    different writers) answers every filter exactly, each split with its own translation."""
    text_table = str(tmp_path / "text")
    raw_table = str(tmp_path / "raw")
    first = base.filter(F.col("id") < 25)
    second = base.filter(F.col("id") >= 25)
    write_table(first, text_table, options={TYPEMAP + "message": "text"})
    write_table(second.coalesce(1), raw_table)
    # Another writer's split, committed to the text table as version 1 with its own mapping.
    raw_actions = version_actions(raw_table, 0)
    registry = next(a["metaData"] for a in raw_actions if "metaData" in a)["configuration"]
    assert isinstance(registry, dict)
    adds = []
    for a in raw_actions:
        if "add" in a:
            add = dict(a["add"])
            # The split, and on the companion layout the Parquet files holding its rows.
            companion = add.get("companionSourceFiles") or []
            assert isinstance(companion, list)
            for f in [str(add["path"]), *map(str, companion)]:
                shutil.copy(Path(raw_table) / f, Path(text_table) / f)
            add["docMappingJson"] = registry["docMappingSchema." + str(add.pop("docMappingRef"))]
            adds.append({"add": add})
    _write_log(text_table, 1, adds)
    _forget_cached_logs(spark)
    table = read_table(spark, text_table)
    for cond in [
        F.col("message") == "connection reset by peer 30",
        F.col("message") == "connection reset by peer 3",
        F.col("message").contains("peer 4"),
        F.col("message").startswith("connection"),
        ~(F.col("message") == "connection reset by peer 30"),
    ]:
        assert_same_rows(table.filter(cond), base.filter(cond))
    plan = scan_node(table.filter(F.col("message") == "connection reset by peer 30"))
    assert plan.count('"field":"message"') >= 2 and " | " in plan, plan
