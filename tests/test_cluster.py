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

from storage_servers import S3Server

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


def _run_job(source: str, tmp_path: Path, logs: Path, *args: str) -> dict[str, str]:
    """Runs the driver script `source` with `args` against the cluster; the fields of the
    RESULT line it prints."""
    job = tmp_path / "job.py"
    job.write_text(source)
    env = dict(
        os.environ,
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
    )
    done = subprocess.run(
        [sys.executable, str(job), *args], capture_output=True, text=True, timeout=600, env=env
    )
    result = [line for line in done.stdout.splitlines() if line.startswith("RESULT")]
    assert done.returncode == 0 and result, (
        f"job failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}\n"
        f"worker log: {(logs / 'worker.log').read_text()[-3000:]}"
    )
    return dict(kv.split("=") for kv in result[0].split()[1:])


def test_write_and_search_on_a_standalone_cluster(
    standalone_master: tuple[str, Path], tmp_path: Path
) -> None:
    url, logs = standalone_master
    table = tmp_path / "table"
    fields = _run_job(JOB, tmp_path, logs, url, str(table))
    assert int(fields["executors"]) >= 1
    assert int(fields["total"]) == 20000
    assert int(fields["errors"]) == 2000
    assert int(fields["timeouts"]) == len([i for i in range(20000) if i % 7 == 0])
    assert int(fields["both"]) == int(fields["expected_both"]) > 0
    assert len(list(table.rglob("*.split"))) >= 6  # three shards, several splits each


# An AWS credentials provider of the user's own, compiled by the test: it reads the keys from a
# file, and records each instantiation (process id, and whether a task was running) in another.
PROVIDER = """
package itest;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;

public class FileCredentialsProvider implements AwsCredentialsProvider {
    public FileCredentialsProvider() throws Exception {
        String where = org.apache.spark.TaskContext.get() != null ? "task" : "driver";
        Files.write(Paths.get("MARKER"),
            (where + " " + ProcessHandle.current().pid() + "\\n").getBytes(StandardCharsets.UTF_8),
            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    @Override
    public AwsCredentials resolveCredentials() {
        try {
            String[] keys = new String(Files.readAllBytes(Paths.get("KEYS")),
                StandardCharsets.UTF_8).split("\\n");
            return AwsBasicCredentials.create(keys[0], keys[1]);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}
"""

PROVIDER_JOB = r"""
import os
import sys
from pyspark.sql import SparkSession, functions as F
import indextables

master, url, provider_jar, endpoint = sys.argv[1:]
builder = (SparkSession.builder.master(master).appName("indextables-provider-test")
           .config("spark.ui.enabled", "false").config("spark.executor.memory", "1g")
           .config("spark.jars", provider_jar)
           .config("spark.indextables.aws.credentialsProviderClass",
                   "itest.FileCredentialsProvider")
           .config("spark.indextables.aws.endpoint", endpoint)
           .config("spark.indextables.aws.region", "us-east-1")
           .config("spark.indextables.aws.pathStyleAccess", "true"))
spark = indextables.configure_spark(builder).getOrCreate()
df = spark.range(5000).select(F.col("id"), (F.col("id") % 5).cast("string").alias("k"))
df.repartition(2).write.format("indextables").save(url)
t = spark.read.format("indextables").load(url)
print(f"RESULT total={t.count()} k3={t.filter(F.col('k') == '3').count()} pid={os.getpid()}")
spark.stop()
"""


def test_a_credentials_provider_class_is_instantiated_on_the_executors(
    standalone_master: tuple[str, Path], s3: S3Server, tmp_path: Path
) -> None:
    """spark.indextables.aws.credentialsProviderClass names a class of the user's: each JVM
    that reaches S3 makes its own instance, the executors' included, and no key is set."""
    from indextables import jar_path

    master, logs = standalone_master
    marker, keys = tmp_path / "instances.txt", tmp_path / "keys.txt"
    keys.write_text(f"{s3.access_key}\n{s3.secret_key}\n")
    src = tmp_path / "src" / "itest" / "FileCredentialsProvider.java"
    src.parent.mkdir(parents=True)
    src.write_text(PROVIDER.replace("MARKER", str(marker)).replace("KEYS", str(keys)))
    classes = tmp_path / "classes"
    classpath = os.pathsep.join([jar_path(), str(SPARK_HOME / "jars" / "*")])
    subprocess.run(
        ["javac", "-d", str(classes), "-cp", classpath, str(src)], check=True, timeout=120
    )
    provider_jar = tmp_path / "provider.jar"
    subprocess.run(["jar", "cf", str(provider_jar), "-C", str(classes), "."], check=True)

    url = f"s3://{s3.new_bucket()}/provided"
    fields = _run_job(PROVIDER_JOB, tmp_path, logs, master, url, str(provider_jar), s3.endpoint)
    assert int(fields["total"]) == 5000 and int(fields["k3"]) == 1000
    instances = [line.split() for line in marker.read_text().splitlines()]
    driver_pids = {pid for where, pid in instances if where == "driver"}
    task_pids = {pid for where, pid in instances if where == "task"}
    assert driver_pids, instances  # the driver reads and commits the log
    assert task_pids and not (task_pids & driver_pids), instances  # executors: other JVMs
    objects = s3.client().list_objects_v2(Bucket=url.split("/")[2])["Contents"]
    assert any(o["Key"].endswith(".split") for o in objects)


CACHE_JOB = r"""
import sys, time
from pyspark.sql import SparkSession, functions as F
import indextables

master, path = sys.argv[1], sys.argv[2]
builder = (SparkSession.builder.master(master).appName("indextables-cache-commands-test")
           .config("spark.ui.enabled", "false").config("spark.executor.memory", "768m")
           .config("spark.executor.cores", "1").config("spark.cores.max", "2"))
spark = indextables.configure_spark(builder).getOrCreate()
sc = spark.sparkContext
deadline = time.time() + 60
while sc._jsc.sc().getExecutorMemoryStatus().size() < 3 and time.time() < deadline:
    time.sleep(0.5)
df = spark.range(6000).select(
    F.col("id"), F.concat(F.lit("event "), F.col("id").cast("string")).alias("message"))
df.repartition(6).write.format("indextables").save(path)
prewarm = spark.sql(f"PREWARM INDEXTABLES CACHE '{path}'").collect()
flush = spark.sql("FLUSH INDEXTABLES SEARCHER CACHE").collect()
t = spark.read.format("indextables").load(path)
print("RESULT executors=%d prewarmed=%d on_assigned=%d prewarm_rows=%d flush_jvms=%d "
      "count=%d hits=%d" % (
          sc._jsc.sc().getExecutorMemoryStatus().size() - 1,
          sum(r.splits_prewarmed for r in prewarm),
          sum(r.splits_on_assigned_executor for r in prewarm),
          len(prewarm), len({r.executor_id for r in flush}),
          t.count(), t.filter(F.col("message").contains("event 42")).count()))
spark.stop()
"""


def test_cache_commands_reach_every_executor_and_prewarm_follows_placement(
    standalone_master: tuple[str, Path], tmp_path: Path
) -> None:
    """Two executors of one core each: PREWARM sends each split to the executor the scan
    places it on, and FLUSH reaches the driver and both executors."""
    url, logs = standalone_master
    fields = _run_job(CACHE_JOB, tmp_path, logs, url, str(tmp_path / "table"))
    assert int(fields["executors"]) == 2
    assert int(fields["prewarmed"]) == 6
    assert int(fields["on_assigned"]) == 6  # idle executors: every task ran where it was placed
    assert int(fields["prewarm_rows"]) in (1, 2)
    assert int(fields["flush_jvms"]) == 3  # the driver and the two executors
    assert int(fields["count"]) == 6000
    assert int(fields["hits"]) == 111  # 42, 420..429, 4200..4299
