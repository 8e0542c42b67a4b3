"""Writers in processes of their own, on S3 (moto) and Azure Blob Storage (Azurite).

- Four writer processes append six times each to one table on each store at once: every commit
  lands, at dense versions, with nothing duplicated.
- A writer killed with SIGKILL in the middle of a split upload (slowed by a throttling proxy,
  so that there is a middle) leaves the table readable at its last version.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from storage_servers import AzureServer, S3Server, ThrottlingProxy

TESTS_DIR = Path(__file__).resolve().parent
PATIENCE_S = 300.0
# Appends per writer and store: four writers race for 4 * ROUNDS versions of each table.
ROUNDS = 6

# A writer: its own driver, built as tests/conftest.py builds the suite's session, with the
# object-store settings it is given. It appends `rounds` batches of ten rows to every table.
WRITER = r"""
import json
import sys

import indextables

tests_dir, writer, rounds, urls, conf = sys.argv[1:]
sys.path.insert(0, tests_dir)
from helpers import session_builder

spark = indextables.configure_spark(
    session_builder(f"indextables-writer-{writer}", json.loads(conf))
).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
w = int(writer)
for r in range(int(rounds)):
    for url in json.loads(urls):
        rows = spark.range(w * 1000 + r * 10, w * 1000 + r * 10 + 10, numPartitions=1)
        rows.selectExpr("id", f"{w} AS writer", f"{r} AS round").write.format(
            "indextables"
        ).mode("append").save(url)
    print(f"ROUND {r}", flush=True)
print("DONE", flush=True)
"""


def _with_conf(spark: SparkSession, conf: dict[str, str]) -> None:
    for k, v in conf.items():
        spark.conf.set(k, v)


def _without_conf(spark: SparkSession, conf: dict[str, str]) -> None:
    for k in conf:
        spark.conf.unset(k)


def _history_versions(spark: SparkSession, url: str) -> list[int]:
    return sorted(
        r["version"] for r in spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{url}'").collect()
    )


def test_four_writer_processes_land_every_commit_on_both_stores(
    spark: SparkSession, s3: S3Server, azure: AzureServer, tmp_path: Path
) -> None:
    conf = {**s3.conf(), **azure.conf()}
    urls = [
        f"s3://{s3.new_bucket()}/concurrent",
        azure.table_url(azure.new_container(), "concurrent"),
    ]
    _with_conf(spark, conf)
    try:
        for url in urls:
            spark.range(0, 0).selectExpr("id", "-1 AS writer", "-1 AS round").write.format(
                "indextables"
            ).save(url)
        script = tmp_path / "writer.py"
        script.write_text(WRITER)
        writers = []
        for w in range(4):
            out = (tmp_path / f"writer-{w}.txt").open("wb")
            args = [str(TESTS_DIR), str(w), str(ROUNDS), json.dumps(urls), json.dumps(conf)]
            writers.append(
                (
                    subprocess.Popen(
                        [sys.executable, str(script), *args], stdout=out, stderr=subprocess.STDOUT
                    ),
                    tmp_path / f"writer-{w}.txt",
                )
            )
        for proc, out_path in writers:
            rc = proc.wait(timeout=900)
            assert rc == 0, out_path.read_text()[-4000:]
            assert "DONE" in out_path.read_text()

        for url in urls:
            assert _history_versions(spark, url) == list(range(4 * ROUNDS + 1)), url
            rows = spark.read.format("indextables").load(url).collect()
            assert len(rows) == 40 * ROUNDS, url
            assert len({r["id"] for r in rows}) == 40 * ROUNDS, f"{url}: duplicated rows"
            batches = {(r["writer"], r["round"]) for r in rows}
            assert batches == {(w, r) for w in range(4) for r in range(ROUNDS)}, url
            assert all(r["id"] // 1000 == r["writer"] for r in rows)
    finally:
        _without_conf(spark, conf)


# The killed writer: READY once its session runs, waits for `go`, prints WRITING, and appends
# one big split (uploaded in parts / staged blocks through the throttling proxy).
KILLED = r"""
import json
import sys
import time
from pathlib import Path

import indextables

tests_dir, url, conf, work = sys.argv[1:]
sys.path.insert(0, tests_dir)
from helpers import session_builder

spark = indextables.configure_spark(
    session_builder("indextables-killed-uploader", json.loads(conf))
).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
rows = spark.range(0, 300000, numPartitions=1).selectExpr(
    "id + 1000000 AS id", "sha2(cast(id AS string), 256) AS digest", "uuid() AS noise"
)
rows.limit(10).write.format("indextables").save(f"{work}/warm-up")
print("READY", flush=True)
go = Path(work) / "go"
while not go.exists():
    time.sleep(0.01)
print("WRITING", flush=True)
rows.write.format("indextables").mode("append").save(url)
print("DONE", flush=True)
"""


@pytest.mark.parametrize("kind", ["s3", "azure"])
def test_a_writer_killed_mid_upload_leaves_the_last_version_readable(
    spark: SparkSession,
    s3: S3Server,
    azure: AzureServer,
    tmp_path: Path,
    kind: str,
) -> None:
    if kind == "s3":
        url, conf = f"s3://{s3.new_bucket()}/killed", s3.conf()
        proxy = ThrottlingProxy(int(s3.endpoint.rsplit(":", 1)[1]), rate=2_000_000)
        writer_conf = {
            **conf,
            "spark.indextables.aws.endpoint": f"http://127.0.0.1:{proxy.port}",
            "spark.indextables.s3.multipartThreshold": "5M",
            "spark.indextables.s3.partSize": "5M",
            "spark.indextables.s3.maxConcurrency": "1",
        }
    else:
        url, conf = azure.table_url(azure.new_container(), "killed"), azure.conf()
        port = int(azure.endpoint.split(":")[2].split("/")[0])
        proxy = ThrottlingProxy(port, rate=2_000_000)
        cs = azure.connection_string.replace(f":{port}/", f":{proxy.port}/")
        writer_conf = {
            "spark.indextables.azure.connectionString": cs,
            "spark.indextables.azure.blockSize": "1M",
            "spark.indextables.azure.maxConcurrency": "1",
        }
    _with_conf(spark, conf)
    try:
        spark.range(0, 1000).selectExpr(
            "id", "sha2(cast(id AS string), 256) AS digest", "'x' AS noise"
        ).write.format("indextables").save(url)
        before = _history_versions(spark, url)

        script, out = tmp_path / "killed.py", tmp_path / "killed.txt"
        script.write_text(KILLED)
        with out.open("wb") as sink:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    str(script),
                    str(TESTS_DIR),
                    url,
                    json.dumps(writer_conf),
                    str(tmp_path),
                ],
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

        def said(word: str) -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"the writer ended ({proc.returncode}):\n{out.read_text()}")
            return word in out.read_text(errors="replace")

        deadline = time.monotonic() + PATIENCE_S
        while not said("READY"):
            assert time.monotonic() < deadline, "the writer's session did not start"
            time.sleep(0.05)
        sent_before = proxy.sent
        (tmp_path / "go").touch()
        # Mid-upload: more than 2 MB of the split has gone through the proxy, not all of it.
        while proxy.sent - sent_before < 2_000_000:
            assert time.monotonic() < deadline, "the upload did not start"
            said("WRITING")
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        assert "DONE" not in out.read_text()

        assert _history_versions(spark, url) == before
        table = spark.read.format("indextables").load(url)
        assert table.count() == 1000
        assert table.filter("id = 500").collect()[0]["noise"] == "x"
        if kind == "s3":
            # The upload was in parts, and its parts never became an object.
            bucket = url.split("/")[2]
            uploads = s3.client().list_multipart_uploads(Bucket=bucket).get("Uploads", [])
            assert uploads, "the writer was not killed in a multipart upload"
    finally:
        _without_conf(spark, conf)
        proxy.close()
