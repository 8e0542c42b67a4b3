"""A companion index over a Delta table on S3, both on a real S3 server (moto on 127.0.0.1).

Delta reaches S3 through Hadoop's S3A file system (hadoop-aws and its AWS SDK v1, in
target/oracle-jars), as a Delta user on S3 does; the plugin reaches it through its own store
(AWS SDK v2). S3A is not on the suite's session's class path, so the scenario runs in a Python
process of its own (this file, run as a script), which the test starts and checks. moto 5 refuses
the AWS SDK v1's signatures (moto issue 5948), so this server does not check them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import Row

import delta_oracle
from storage_servers import start_s3

pytestmark = pytest.mark.skipif(
    not delta_oracle.s3a_installed(),
    reason="build/package.sh puts Delta Lake's JARs and Hadoop's S3A in place",
)


def test_a_delta_table_on_s3_and_its_index_on_s3_stay_in_step(tmp_path: Path) -> None:
    server = start_s3(tmp_path, authenticated=False)
    try:
        bucket = server.new_bucket()
        done = subprocess.run(
            [sys.executable, __file__, server.endpoint, bucket],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=900,
        )
        pages = server.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
        keys = {o["Key"] for page in pages for o in page.get("Contents", [])}
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    assert "every answer matched" in done.stdout
    # Both tables live on the server: Delta's log, files and vectors; the index's log and splits.
    assert any(k.startswith("delta/_delta_log/") for k in keys)
    assert any(k.startswith("delta/deletion_vector_") for k in keys)
    assert any(k.startswith("index/_transaction_log/") for k in keys)
    assert any(k.startswith("index/") and k.endswith(".split") for k in keys)


def _scenario(endpoint: str, bucket: str) -> None:
    """In a process of its own: Delta and the plugin in one session, both on the S3 server."""
    import indextables
    from helpers import session_builder
    from test_companion_delta import assert_answers_match, create_delta, make_rows

    builder = delta_oracle.configure(indextables.configure_spark(session_builder("delta-s3")))
    options = getattr(builder, "_options", {})
    classpath = [str(options["spark.driver.extraClassPath"])]
    builder = builder.config(
        "spark.driver.extraClassPath",
        ":".join(classpath + [str(j) for j in delta_oracle.s3a_jars()]),
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    settings = {
        # The plugin's store (upstream's keys).
        "spark.indextables.aws.accessKey": "unchecked",
        "spark.indextables.aws.secretKey": "unchecked",
        "spark.indextables.aws.region": "us-east-1",
        "spark.indextables.aws.endpoint": endpoint,
        "spark.indextables.aws.pathStyleAccess": "true",
        # Delta's, through S3A.
        "fs.s3a.endpoint": endpoint,
        "fs.s3a.endpoint.region": "us-east-1",
        "fs.s3a.access.key": "unchecked",
        "fs.s3a.secret.key": "unchecked",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
    }
    for key, value in settings.items():
        spark.conf.set(key, value)
    source, index = f"s3a://{bucket}/delta", f"s3://{bucket}/index"

    def build() -> Row:
        (row,) = spark.sql(
            f"BUILD INDEXTABLES COMPANION FOR DELTA '{source}' AT LOCATION '{index}'"
        ).collect()
        return row

    delta = create_delta(spark, source, make_rows(spark, 600, seed=1, first_id=0))  # type: ignore[arg-type]
    row = build()
    assert row.status == "success" and row.splits_created > 0, row
    assert_answers_match(spark, index, delta)  # type: ignore[arg-type]
    # An append: only its files are indexed.
    delta.append(make_rows(spark, 200, seed=2, first_id=600, files=1))
    row = build()
    assert (row.status, row.splits_invalidated) == ("success", 0), row
    assert row.parquet_files_indexed in (1, 2, 3), row  # one file, in each of its partitions
    assert_answers_match(spark, index, delta)  # type: ignore[arg-type]
    # A DELETE with deletion vectors (Delta's on S3, read through S3A): nothing is re-indexed.
    delta.sql("DELETE FROM {table} WHERE host = 'host-3' OR id % 5 = 0")
    row = build()
    assert (row.status, row.parquet_files_indexed) == ("success", 0), row
    assert_answers_match(spark, index, delta)  # type: ignore[arg-type]
    spark.stop()
    print("every answer matched")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    _scenario(sys.argv[1], sys.argv[2])
