"""Write and search on a real standalone cluster: a master and a worker in their own JVMs.

In local mode the executors share the driver's JVM; here the plan, the Hadoop configuration,
the native library and the commit messages must all cross process boundaries, with the JAR
shipped to the executor through spark.jars exactly as the package's helper sets it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

SPARK_HOME = Path(pyspark.__file__).parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"

JOB = r"""
import sys
from pyspark.sql import SparkSession, functions as F
import indextables

master, path = sys.argv[1], sys.argv[2]
builder = (SparkSession.builder.master(master).appName("indextables-cluster-test")
           .config("spark.ui.enabled", "false").config("spark.executor.memory", "1g")
           .config("spark.sql.shuffle.partitions", "2"))
spark = indextables.configure_spark(builder).getOrCreate()
df = spark.range(20000).select(
    F.col("id"),
    F.when(F.col("id") % 10 == 0, "ERROR").otherwise("INFO").alias("level"),
    F.concat(F.lit("request "), F.col("id").cast("string"),
             F.when(F.col("id") % 7 == 0, F.lit(" timed out")).otherwise(F.lit(" served")))
     .alias("message"),
    (F.col("id") % 3).cast("string").alias("shard"))
(df.repartition(4).write.format("indextables")
   .option("spark.indextables.indexing.typemap.message", "text")
   .option("spark.indextables.maxRowsPerSplit", "3000")
   .partitionBy("shard").save(path))
t = spark.read.format("indextables").load(path)
total = t.count()
errors = t.filter(F.col("level") == "ERROR").count()
timeouts = t.filter(F.col("message").contains("timed")).count()
both = t.filter((F.col("level") == "ERROR") & F.col("message").contains("timed")
                & (F.col("shard") == "1")).count()
expected_both = df.filter((F.col("id") % 70 == 0) & (F.col("shard") == "1")).count()
# Executors that ran tasks, other than the driver (registered by now).
executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
print(f"RESULT executors={executors} total={total} errors={errors} timeouts={timeouts} "
      f"both={both} expected_both={expected_both}")
spark.stop()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


@pytest.fixture(scope="module")
def standalone_master(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    if not SPARK_CLASS.exists():
        pytest.skip(f"{SPARK_CLASS} not found (pyspark's launcher scripts)")
    logs = tmp_path_factory.mktemp("cluster-logs")
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    env = dict(
        os.environ,
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_NO_DAEMONIZE="1",
        PYSPARK_PYTHON=sys.executable,
    )
    procs = []
    try:
        master_log = open(logs / "master.log", "w")
        procs.append(
            subprocess.Popen(
                [
                    str(SPARK_CLASS),
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(ui),
                ],
                stdout=master_log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        )
        _wait_for_port(port, 60)
        url = f"spark://127.0.0.1:{port}"
        worker_log = open(logs / "worker.log", "w")
        procs.append(
            subprocess.Popen(
                [
                    str(SPARK_CLASS),
                    "org.apache.spark.deploy.worker.Worker",
                    url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "2",
                    "--memory",
                    "2g",
                    "--webui-port",
                    str(worker_ui),
                    "--work-dir",
                    str(logs / "work"),
                ],
                stdout=worker_log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        )
        time.sleep(3)
        yield url, logs
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_write_and_search_on_a_standalone_cluster(
    standalone_master: tuple[str, Path], tmp_path: Path
) -> None:
    url, logs = standalone_master
    job = tmp_path / "job.py"
    job.write_text(JOB)
    table = tmp_path / "table"
    env = dict(
        os.environ,
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
    )
    done = subprocess.run(
        [sys.executable, str(job), url, str(table)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    result = [line for line in done.stdout.splitlines() if line.startswith("RESULT")]
    assert done.returncode == 0 and result, (
        f"job failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}\n"
        f"worker log: {(logs / 'worker.log').read_text()[-3000:]}"
    )
    fields = dict(kv.split("=") for kv in result[0].split()[1:])
    assert int(fields["executors"]) >= 1
    assert int(fields["total"]) == 20000
    assert int(fields["errors"]) == 2000
    assert int(fields["timeouts"]) == len([i for i in range(20000) if i % 7 == 0])
    assert int(fields["both"]) == int(fields["expected_both"]) > 0
    assert len(list(table.rglob("*.split"))) >= 6  # three shards, several splits each
