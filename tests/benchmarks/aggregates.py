"""Aggregates answered by the splits against the same queries on Parquet, in one run.

    .venv/bin/python tests/benchmarks/aggregates.py --rows 2000000 --splits 20 --runs 10 \\
        --warmup 3 --out target/bench-aggregates

Generates the benchmark suite's log rows (tests/benchmarks/datagen.py) once into a Parquet
table of `--splits` files (timestamps as TIMESTAMP_MICROS, so Parquet can filter on them), and
appends each file as its own commit to an IndexTables table, as appends make splits. Then times
the issue's four queries on both, side by side in each round (which goes first alternates),
after `--warmup` rounds of all four (both engines' code paths compiled by the JIT first), with
tantivy's leaf-search cache off (`spark.indextables.cache.queryCache.enabled=false`: every
request to a split is made new, so every round searches):

- `level_counts`: `SELECT level, COUNT(*) ... GROUP BY level`;
- `host_level_avg`: `SELECT host, level, AVG(latency_ms) ... GROUP BY host, level`;
- `hourly_one_day`: `indextables_date_histogram(ts, '1h')` with `COUNT(*)` over one day (a
  different day each round);
- `ts_min_max`: `SELECT MIN(ts), MAX(ts)` (the log's statistics answer it, with no search).

Every answer is checked against Parquet's. Then, when the bench classes are compiled
(`build/sbt spark/Test/compile`), the same four questions are answered by raw tantivy4java
without Spark on the same splits (io.indextables.spark.bench.AggregateCeiling, the same rounds,
the same threads, each request new to the leaf-search cache too).
Reports medians, the ratio Parquet / IndexTables, IndexTables / raw tantivy4java, how the
IndexTables scan was answered (its description) and how many rows it shipped, in
<out>/aggregates.json and <out>/aggregates.md (printed too).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable

from pyspark.sql import DataFrame, Row, SparkSession

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datagen
from bench_session import add_session_args, local_session

QUERY_CACHE = "spark.indextables.cache.queryCache.enabled"
TYPEMAP_MESSAGE = "spark.indextables.indexing.typemap.message"
LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"


def _spark(cores: int, memory: str) -> SparkSession:
    return local_session(
        "aggregates", cores, memory, {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}
    )


def queries(days: list[dt.date]) -> dict[str, Callable[[str, int], str]]:
    """Each query as SQL over a view, for round `r` (the hourly one moves through `days`)."""

    def hourly(view: str, r: int) -> str:
        day = days[r % len(days)]
        return (
            f"SELECT indextables_date_histogram(ts, '1h') AS hour, COUNT(*) AS n FROM {view} "
            f"WHERE ts >= TIMESTAMP '{day} 00:00:00' AND ts < TIMESTAMP '{day + dt.timedelta(1)} "
            "00:00:00' GROUP BY indextables_date_histogram(ts, '1h')"
        )

    return {
        "level_counts": lambda v, r: f"SELECT level, COUNT(*) AS n FROM {v} GROUP BY level",
        "host_level_avg": lambda v, r: (
            f"SELECT host, level, AVG(latency_ms) AS avg_latency FROM {v} GROUP BY host, level"
        ),
        "hourly_one_day": hourly,
        "ts_min_max": lambda v, r: f"SELECT MIN(ts) AS lo, MAX(ts) AS hi FROM {v}",
    }


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return bool(a == b)


def same_rows(a: list[Row], b: list[Row]) -> bool:
    """Same rows in any order; doubles within a relative 1e-9."""

    def key(r: Row) -> str:
        return repr(tuple(round(v, 6) if isinstance(v, float) else v for v in r))

    xs, ys = sorted(a, key=key), sorted(b, key=key)
    return len(xs) == len(ys) and all(
        all(_close(x, y) for x, y in zip(r, s)) for r, s in zip(xs, ys)
    )


def scan_info(df: DataFrame) -> dict[str, Any]:
    """The IndexTables scan's description, the rows it shipped, and the Spark jobs it took
    (after one collect)."""
    from helpers import plan_nodes

    shipped, description = 0, None
    for n in plan_nodes(df._jdf.queryExecution().executedPlan()):
        name = n.getClass().getSimpleName()
        if name == "BatchScanExec":
            description = str(n.scan().description())
        elif name == "IndexTablesLocalScanExec":
            description = str(n.description())
        else:
            continue
        shipped += int(n.metrics().get("numOutputRows").get().value())
    return {"scan": description, "scan_rows": shipped}


def _collect(spark: SparkSession, sql: str) -> list[Row]:
    return spark.sql(sql).collect()


def _timed(action: Callable[[], list[Row]]) -> tuple[float, list[Row]]:
    start = time.perf_counter()
    rows = action()
    return time.perf_counter() - start, rows


def build_tables(spark: SparkSession, rows: int, splits: int, out: Path) -> tuple[str, str]:
    """The Parquet source (one file per future split) and the IndexTables table of `splits`
    appends; both kept under `out` for reruns of the same size."""
    source = out / f"source-{rows}-{splits}.parquet"
    if not source.exists():
        loghub = LOGHUB if LOGHUB.is_dir() else None
        df, _ = datagen.generate(spark, rows, splits, 7, loghub)
        df.write.parquet(str(source))
    table = out / f"table-{rows}-{splits}"
    if not table.exists():
        for f in sorted(source.glob("part-*.parquet")):
            (
                spark.read.parquet(str(f))
                .coalesce(1)
                .write.format("indextables")
                .option(TYPEMAP_MESSAGE, "text")
                .mode("append")
                .save(str(table))
            )
    return str(source), str(table)


def run(args: argparse.Namespace, spark: SparkSession) -> dict[str, Any]:
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    source, table = build_tables(spark, args.rows, args.splits, out)
    spark.read.parquet(source).createOrReplaceTempView("pq")
    spark.read.format("indextables").option(QUERY_CACHE, "false").load(
        table
    ).createOrReplaceTempView("it")
    first, last = spark.sql("SELECT MIN(ts), MAX(ts) FROM pq").collect()[0]
    days = [first.date() + dt.timedelta(d) for d in range(max(1, (last - first).days))]
    result: dict[str, Any] = {
        "rows": args.rows,
        "splits": len(list(Path(table).glob("*.split"))),
        "runs": args.runs,
        "warmup": args.warmup,
        "cores": args.cores,
        "command": " ".join(sys.argv),
        "queries": {},
    }
    qs = queries(days)
    times: dict[str, dict[str, list[float]]] = {n: {"parquet": [], "indextables": []} for n in qs}
    verified = {name: True for name in qs}
    # Every query's warm-up rounds come first, so that no query is timed while code the later
    # ones share is still being compiled; then the timed rounds, each query in turn.
    for r in range(args.warmup + args.runs):
        for name, sql in qs.items():
            # Timed from the SQL text: parsing, planning (pushdown included) and running. The
            # order alternates: a query right after the other engine's pays for what that one
            # left running (listener events, cleanup, garbage), each engine in half the rounds.
            if r % 2 == 0:
                t_pq, expected = _timed(partial(_collect, spark, sql("pq", r)))
                t_it, actual = _timed(partial(_collect, spark, sql("it", r)))
            else:
                t_it, actual = _timed(partial(_collect, spark, sql("it", r)))
                t_pq, expected = _timed(partial(_collect, spark, sql("pq", r)))
            verified[name] = verified[name] and same_rows(actual, expected)
            if r >= args.warmup:
                times[name]["parquet"].append(t_pq)
                times[name]["indextables"].append(t_it)
    for name, sql in qs.items():
        df = spark.sql(sql("it", 0))
        df.collect()
        pq_median = statistics.median(times[name]["parquet"])
        it_median = statistics.median(times[name]["indextables"])
        result["queries"][name] = {
            "sql": sql("it", 0),
            "verified": verified[name],
            "groups": len(spark.sql(sql("pq", 0)).collect()),
            "parquet_median_s": pq_median,
            "indextables_median_s": it_median,
            "ratio": pq_median / it_median,
            "times": times[name],
            **scan_info(df),
        }
    result["verified"] = all(q["verified"] for q in result["queries"].values())
    result["ceiling"] = ceiling(args, table, days)
    return result


CEILING_CLASS = "io.indextables.spark.bench.AggregateCeiling"


def ceiling(args: argparse.Namespace, table: str, days: list[dt.date]) -> dict[str, Any] | None:
    """Raw tantivy4java's medians for the same queries on the same splits, or None when the
    bench classes are not compiled."""
    from suite import harness_classpath

    cp = harness_classpath(CEILING_CLASS)
    if cp is None:
        return None
    out = args.out.resolve() / "ceiling.json"
    cmd = [
        "java", "-Xmx4g", "-cp", cp, CEILING_CLASS, "--table", table,
        "--days", ",".join(str(d) for d in days), "--threads", str(args.cores),
        "--runs", str(args.runs), "--warmup", str(args.warmup), "--out", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{CEILING_CLASS} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    found: dict[str, Any] = json.loads(out.read_text())
    return found


def markdown(r: dict[str, Any]) -> str:
    lines = [
        f"# Aggregates: {r['rows']:,} rows in {r['splits']} appended splits, {r['cores']} cores",
        "",
        f"`{r['command']}`",
        "",
        f"Medians of {r['runs']} runs after {r['warmup']} warm-up rounds; "
        "ratio = Parquet / IndexTables.",
        "",
        "| query | groups | Parquet | IndexTables | ratio | raw tantivy4java | IndexTables / raw "
        "| rows shipped | same answer |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    raw = (r.get("ceiling") or {}).get("queries", {})
    for name, q in r["queries"].items():
        c = raw.get(name)
        lines.append(
            f"| {name} | {q['groups']} | {q['parquet_median_s']:.3f} s | "
            f"{q['indextables_median_s']:.3f} s | {q['ratio']:.1f}x | "
            + (
                f"{c['median_s']:.3f} s | {q['indextables_median_s'] / c['median_s']:.2f}x | "
                if c
                else "not run | | "
            )
            + f"{q['scan_rows']} | {'yes' if q['verified'] else 'NO'} |"
        )
    lines += ["", "IndexTables scans:", ""]
    lines += [f"- {name}: `{q['scan']}`" for name, q in r["queries"].items()]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--splits", type=int, default=20, help="appends, one split each")
    p.add_argument("--runs", type=int, default=10, help="timed runs after the warm-up")
    p.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    add_session_args(p, "target/bench-aggregates")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for helpers
    spark = _spark(args.cores, args.driver_memory)
    try:
        result = run(args, spark)
    finally:
        spark.stop()
    (args.out / "aggregates.json").write_text(json.dumps(result, indent=2, default=str))
    md = markdown(result)
    (args.out / "aggregates.md").write_text(md)
    print(md)
    return 0 if result["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())
