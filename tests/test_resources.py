"""Writing and reading tables over and over does not leak file descriptors or memory.

Measures the driver JVM (local mode: it runs the executors too) through /proc.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from helpers import jvm, read_table, write_table

ROUNDS = 30
WARM_UP = 5
MAX_FD_GROWTH = 16  # fewer than one per measured round
MAX_RSS_GROWTH_MB = 300
MAX_NATIVE_GROWTH_MB = 150  # RSS beyond what the JVM committed: tantivy's and Arrow's memory


def _jvm_pid(spark: SparkSession) -> int:
    return int(jvm(spark).java.lang.ProcessHandle.current().pid())


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS in /proc/{pid}/status")


def _jvm_committed_mb(spark: SparkSession) -> float:
    """Heap plus non-heap memory the JVM has committed: RSS minus this is native memory."""
    bean = jvm(spark).java.lang.management.ManagementFactory.getMemoryMXBean()
    heap = bean.getHeapMemoryUsage().getCommitted()
    committed = heap + bean.getNonHeapMemoryUsage().getCommitted()
    return float(committed) / (1024 * 1024)


def _settle(spark: SparkSession) -> None:
    jvm(spark).java.lang.System.gc()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_repeated_write_and_read_keeps_fds_and_rss_flat(
    spark: SparkSession, tmp_path: Path
) -> None:
    df = spark.range(2000).select(
        F.col("id"),
        F.concat(F.lit("request "), F.col("id").cast("string"), F.lit(" served")).alias("message"),
        (F.col("id") % 97).cast("double").alias("latency_ms"),
    )
    pid = _jvm_pid(spark)
    samples: list[tuple[int, float]] = []
    native: list[float] = []
    for round_ in range(ROUNDS):
        path = str(tmp_path / f"t{round_}")
        write_table(df, path, options={"spark.indextables.indexing.typemap.message": "text"})
        table = read_table(spark, path)
        assert table.count() == 2000
        assert table.filter(F.col("message").contains("served")).limit(5).count() == 5
        shutil.rmtree(path)
        _settle(spark)
        rss = _rss_mb(pid)
        samples.append((_open_fds(pid), rss))
        native.append(rss - _jvm_committed_mb(spark))
    base_fds, base_rss = samples[WARM_UP - 1]
    end_fds, end_rss = samples[-1]
    trace = ", ".join(f"{fds}/{rss:.0f}MB" for fds, rss in samples)
    native_trace = ", ".join(f"{mb:.0f}" for mb in native)
    print(f"fds/RSS per round: {trace}")
    print(f"native MB (RSS - JVM committed) per round: {native_trace}")
    native_growth = native[-1] - native[WARM_UP - 1]
    assert native_growth <= MAX_NATIVE_GROWTH_MB, f"native memory grew: {native_trace}"
    assert end_fds - base_fds <= MAX_FD_GROWTH, f"open fds grew {base_fds} -> {end_fds}: {trace}"
    assert end_rss - base_rss <= MAX_RSS_GROWTH_MB, (
        f"RSS grew {base_rss:.0f} -> {end_rss:.0f} MB: {trace}"
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_jvm_keeps_no_copy_of_the_native_library_on_disk(
    spark: SparkSession, tmp_path: Path
) -> None:
    # tantivy4java loads its library from a copy it writes into java.io.tmpdir (about 50 MB) and
    # never deletes; the plugin deletes the copy once it is loaded (`util/NativeLibrary`).
    path = str(tmp_path / "t")
    write_table(spark.range(10).selectExpr("id", "'x' AS s"), path)
    assert read_table(spark, path).filter("s = 'x'").count() == 10
    maps = Path(f"/proc/{_jvm_pid(spark)}/maps").read_text().splitlines()
    mapped = {line.split(None, 5)[-1] for line in maps if "libtantivy4java.so" in line}
    assert mapped, "tantivy4java's library is not loaded"
    assert all(m.endswith("(deleted)") for m in mapped), mapped
