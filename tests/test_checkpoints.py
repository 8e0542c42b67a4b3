"""Checkpoints written through PySpark: Avro state files in the 0.5.4 forms, and time travel."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from helpers import jvm


def _append(spark: SparkSession, path: str, ids: list[int], **options: str) -> None:
    writer = spark.createDataFrame([(i, f"row {i}") for i in ids], "id long, text string").write
    writer = writer.format("indextables").mode("append")
    for k, v in options.items():
        writer = writer.option(k, v)
    writer.save(path)


def test_every_tenth_version_writes_an_avro_state(spark: SparkSession, tmp_table: str) -> None:
    for i in range(12):
        _append(spark, tmp_table, [i])
    log = Path(tmp_table) / "_transaction_log"
    pointer = json.loads((log / "_last_checkpoint").read_text())
    assert pointer["version"] == 10
    assert pointer["format"] == "avro-state"
    assert pointer["stateDir"] == "state-v00000000000000000010"
    state = log / pointer["stateDir"] / "_manifest.avro"
    assert state.read_bytes()[:4] == b"Obj\x01"
    manifests = list((log / "manifests").glob("manifest-*.avro"))
    assert manifests and all(m.read_bytes()[:4] == b"Obj\x01" for m in manifests)

    df = spark.read.format("indextables").load(tmp_table)
    assert sorted(r["id"] for r in df.collect()) == list(range(12))


def test_time_travel_across_a_checkpoint(spark: SparkSession, tmp_table: str) -> None:
    for i in range(5):
        _append(spark, tmp_table, [i], **{"spark.indextables.checkpoint.interval": "2"})
    read = spark.read.format("indextables")
    assert read.option("versionAsOf", "1").load(tmp_table).count() == 2
    assert read.option("versionAsOf", "4").load(tmp_table).count() == 5
    assert spark.read.format("indextables").load(tmp_table).count() == 5
    future = "2999-01-01 00:00:00"
    assert (
        spark.read.format("indextables").option("timestampAsOf", future).load(tmp_table).count()
        == 5
    )


def test_partition_filter_skips_whole_state_manifests(spark: SparkSession, tmp_table: str) -> None:
    options = {
        "spark.indextables.checkpoint.interval": "2",
        "spark.indextables.state.entriesPerManifest": "1",
        "spark.indextables.state.compression": "none",  # so the test can find a manifest's paths
    }
    for v, region in enumerate(["a", "b", "c"]):
        df = spark.createDataFrame(
            [(v * 10 + i, region) for i in range(5)], "id long, region string"
        ).coalesce(1)
        writer = df.write.format("indextables").mode("append").partitionBy("region")
        for k, val in options.items():
            writer = writer.option(k, val)
        writer.save(tmp_table)
    log = Path(tmp_table) / "_transaction_log"
    assert json.loads((log / "_last_checkpoint").read_text())["version"] == 2
    manifests = sorted((log / "manifests").glob("manifest-*.avro"))
    holding_b = [m for m in manifests if b"region=b/" in m.read_bytes()]
    assert len(manifests) == 3 and len(holding_b) == 1
    holding_b[0].unlink()

    # A fresh session, so nothing of the table is cached in the driver.
    spark.catalog.clearCache()
    jvm(spark).io.indextables.spark.transaction.TransactionLog.clearCache()
    table = spark.read.format("indextables").load(tmp_table)
    only_a = table.filter("region = 'a'")
    assert sorted(r["id"] for r in only_a.collect()) == [0, 1, 2, 3, 4]
    assert table.filter("region in ('a', 'c')").count() == 10
    # Reading partition b needs the missing manifest, and the error names it.
    try:
        table.filter("region = 'b'").count()
    except Exception as e:  # noqa: BLE001 - py4j wraps the JVM error
        assert holding_b[0].name in str(e)
    else:
        raise AssertionError("reading a partition whose manifest is missing did not fail")
