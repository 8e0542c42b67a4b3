"""Checkpoints written through PySpark: Avro state files in the 0.5.4 forms, and time travel."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession


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
    assert spark.read.format("indextables").option("timestampAsOf", future).load(
        tmp_table
    ).count() == 5
