"""Object-store mode of the benchmark suite: the suite's queries on a table in a local S3 server.

The table is built as appends make it (one split per append of --append-rows rows) in a moto S3
server on 127.0.0.1 (tests/storage_servers.py), and the same appends make a table on local disk
and a Parquet copy, for comparison in the same run. For every query it reports what tantivy4java
fetched from the store (SplitCacheManager.getObjectStorageBytesFetched / RequestCount) and the
time, cold and warm:

- cold: a cache manager of its own for each run (the cache size differs by a byte), so nothing
  of the table is in memory: every byte the query needs is fetched;
- warm: the same query again on a manager that has seen it; tantivy's leaf-search cache is off
  throughout, so a warm run searches again (from cached bytes), it is not a cached answer.

    .venv/bin/python tests/benchmarks/object_store.py --rows 2000000 --runs 5 --out target/bench-s3

Writes <out>/results.json and <out>/results.md (also printed).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent))

from pyspark.sql import DataFrame, SparkSession  # noqa: E402

import datagen  # noqa: E402
import indextables  # noqa: E402
import suite  # noqa: E402
from storage_servers import start_s3  # noqa: E402

CACHE_SIZE = "spark.indextables.cache.maxSize"
BASE_CACHE = 512 * 1024 * 1024


def _counters(spark: SparkSession) -> tuple[int, int]:
    m = spark._jvm.io.indextables.tantivy4java.split.SplitCacheManager  # type: ignore[union-attr]
    return int(m.getObjectStorageBytesFetched()), int(m.getObjectStorageRequestCount())


def _timed(spark: SparkSession, df: DataFrame, action: str) -> tuple[float, int, int, Any]:
    b0, r0 = _counters(spark)
    t = time.perf_counter()
    out = suite._execute(df, action)
    secs = time.perf_counter() - t
    b1, r1 = _counters(spark)
    return secs, b1 - b0, r1 - r0, out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--append-rows", type=int, default=100_000)
    p.add_argument("--out", type=Path, default=Path("target/bench-s3"))
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--seed", type=int, default=20240301)
    p.add_argument(
        "--list-objects",
        type=int,
        default=0,
        help="also put this many split-named objects in one table directory and time listing them",
    )
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()

    def log(msg: str) -> None:
        print(f"[s3-bench {time.time() - started:7.1f}s] {msg}", flush=True)

    server = start_s3(out)
    try:
        builder = (
            SparkSession.builder.master("local[2]")
            .appName("indextables-bench-s3")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", args.driver_memory)
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config(suite.QUERY_CACHE, "false")
        )
        for k, v in {**server.conf(), **suite._SQL_CONF}.items():
            builder = builder.config(k, v)
        spark = indextables.configure_spark(builder).getOrCreate()
        spark.sparkContext.setLogLevel("WARN")

        listing = _listing(spark, server, args.list_objects, log) if args.list_objects else None
        appends = max(1, -(-args.rows // args.append_rows))
        loghub = BENCH_DIR.parent.parent.parent / "shared" / "data" / "loghub"
        gen, source_desc = datagen.generate(
            spark, args.rows, appends, args.seed, loghub if loghub.is_dir() else None
        )
        source = out / "data" / "source"
        gen.write.mode("overwrite").parquet(str(source))
        files = sorted(source.glob("*.parquet"))
        log(f"{args.rows} rows in {len(files)} files ({source_desc})")

        s3_url = f"s3://{server.new_bucket()}/logs"
        local = out / "data" / "indextables"
        parquet = out / "data" / "parquet"
        for i, f in enumerate(files):
            part = spark.read.parquet(str(f))
            mode = "append" if i else "overwrite"
            for target in (s3_url, str(local)):
                part.write.format("indextables").option(suite.TYPEMAP_MESSAGE, "text").mode(
                    mode
                ).save(target)
            part.write.mode(mode).parquet(str(parquet))
        bucket = s3_url.split("/")[2]
        objects = [
            o
            for page in server.client()
            .get_paginator("list_objects_v2")
            .paginate(Bucket=bucket, Prefix="logs/")
            for o in page.get("Contents", [])
        ]
        split_bytes = sum(o["Size"] for o in objects if o["Key"].endswith(".split"))
        splits = sum(1 for o in objects if o["Key"].endswith(".split"))
        log(f"tables built: {splits} splits, {split_bytes / 1e6:.1f} MB on S3")

        phrase = (
            "session closed for user" if "loghub" in source_desc else "Connection reset by peer"
        )
        results: dict[str, Any] = {
            "rows": args.rows,
            "splits": splits,
            "table_split_bytes": split_bytes,
            "source": source_desc,
            "runs": args.runs,
            "listing": listing,
            "queries": {},
        }
        cache_bump = 0
        for q in suite.queries(phrase, "block"):
            rec: dict[str, list[float]] = {
                k: []
                for k in (
                    "cold_s",
                    "cold_bytes",
                    "cold_requests",
                    "warm_s",
                    "warm_bytes",
                    "warm_requests",
                    "local_s",
                    "parquet_s",
                )
            }
            for _ in range(args.runs):
                cache_bump += 1
                fresh = {CACHE_SIZE: str(BASE_CACHE + cache_bump)}
                remote = q.build(spark.read.format("indextables").options(**fresh).load(s3_url))
                secs, fetched, requests, cold_out = _timed(spark, remote, q.action)
                rec["cold_s"].append(secs)
                rec["cold_bytes"].append(fetched)
                rec["cold_requests"].append(requests)
                secs, fetched, requests, _ = _timed(spark, remote, q.action)
                rec["warm_s"].append(secs)
                rec["warm_bytes"].append(fetched)
                rec["warm_requests"].append(requests)
                disk = q.build(spark.read.format("indextables").load(str(local)))
                secs, _, _, local_out = _timed(spark, disk, q.action)
                rec["local_s"].append(secs)
                pq = q.build_for("parquet")(spark.read.parquet(str(parquet)))
                secs, _, _, _ = _timed(spark, pq, q.action)
                rec["parquet_s"].append(secs)
                if cold_out is not None and local_out is not None:
                    assert len(cold_out) == len(local_out), (q.name, len(cold_out), len(local_out))
            med = {k: statistics.median(v) for k, v in rec.items()}
            med["cold_fraction_of_table"] = med["cold_bytes"] / split_bytes
            results["queries"][q.name] = {"what": q.what, "median": med, "runs": rec}
            log(
                f"{q.name}: cold {med['cold_s']:.3f}s {med['cold_bytes'] / 1e6:.2f} MB "
                f"({100 * med['cold_fraction_of_table']:.2f}%) {med['cold_requests']:.0f} req; "
                f"warm {med['warm_s']:.3f}s {med['warm_bytes'] / 1e6:.2f} MB; "
                f"local {med['local_s']:.3f}s; parquet {med['parquet_s']:.3f}s"
            )
        (out / "results.json").write_text(json.dumps(results, indent=2))
        md = markdown(results)
        (out / "results.md").write_text(md)
        print(md)
        return 0
    finally:
        server.stop()


def _listing(spark: SparkSession, server: Any, count: int, log: Any) -> dict[str, Any]:
    """Puts `count` objects under one partition directory of a table and times the plugin's
    own LogStore listing them (one level, and recursively)."""
    from concurrent.futures import ThreadPoolExecutor

    bucket = server.new_bucket()
    client = server.client()
    t = time.perf_counter()

    def put(i: int) -> None:
        client.put_object(Bucket=bucket, Key=f"many/day=1/part-{i:07d}.split", Body=b"x")

    with ThreadPoolExecutor(32) as pool:
        list(pool.map(put, range(count)))
    log(f"listing: put {count} objects in {time.perf_counter() - t:.1f}s")
    j = spark._jvm
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    for k, v in server.conf().items():
        conf.set(k, v)
    root = j.org.apache.hadoop.fs.Path(f"s3://{bucket}/many")  # type: ignore[union-attr]
    store = j.io.indextables.spark.storage.LogStore.forPath(root, conf)  # type: ignore[union-attr]
    t = time.perf_counter()
    listed = store.list(j.org.apache.hadoop.fs.Path(f"s3://{bucket}/many/day=1")).size()  # type: ignore[union-attr]
    list_s = time.perf_counter() - t
    t = time.perf_counter()
    it = store.listRecursively(root)
    recursive = 0
    while it.hasNext():
        it.next()
        recursive += 1
    recursive_s = time.perf_counter() - t
    assert listed == count and recursive == count, (listed, recursive, count)
    log(f"listing: {listed} listed in {list_s:.2f}s, {recursive} recursively in {recursive_s:.2f}s")
    return {"objects": count, "list_s": list_s, "recursive_s": recursive_s}


def markdown(r: dict[str, Any]) -> str:
    lines = [
        f"# Object-store mode: {r['rows']:,} rows, {r['splits']} splits, "
        f"{r['table_split_bytes'] / 1e6:.1f} MB of splits in moto S3 (127.0.0.1)",
        "",
        f"Medians of {r['runs']} runs. Cold: a fresh cache manager per run; warm: the same query "
        "again (leaf-search cache off). Bytes and requests: tantivy4java's object-store counters.",
        "",
        "| query | cold s | cold MB | % of table | cold requests | warm s | warm MB | "
        "local disk s | parquet (disk) s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    if r.get("listing"):
        li = r["listing"]
        lines[1:1] = [
            "",
            f"Listing {li['objects']:,} objects under one directory: {li['list_s']:.2f} s "
            f"(one level), {li['recursive_s']:.2f} s (recursive), every one of them listed.",
        ]
    for name, q in r["queries"].items():
        m = q["median"]
        lines.append(
            f"| {name} | {m['cold_s']:.3f} | {m['cold_bytes'] / 1e6:.2f} | "
            f"{100 * m['cold_fraction_of_table']:.2f}% | {m['cold_requests']:.0f} | "
            f"{m['warm_s']:.3f} | {m['warm_bytes'] / 1e6:.2f} | {m['local_s']:.3f} | "
            f"{m['parquet_s']:.3f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
