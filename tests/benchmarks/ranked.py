"""Ranked search: `ORDER BY _score DESC LIMIT k` against Spark over Parquet with the scores
precomputed in a column, and against raw tantivy4java's ranked top-k on the same splits.

    .venv/bin/python tests/benchmarks/ranked.py --rows 2000000 --appends 20 --runs 5 \\
        --out target/bench-ranked

Generates the benchmark suite's log rows (tests/benchmarks/datagen.py) with an `id`, writes them
to Parquet once, and as an IndexTables table of `--appends` appends per layout (`message` as
text). The timed queries are two-term searches of `message` (`a OR b`), a different pair in
every run (and in the warm-up), so no cache answers one from an earlier one; tantivy's query
cache is off. For each query:

  - IndexTables: `SELECT *, _score ... WHERE message indexquery 'a OR b' ORDER BY _score DESC
    LIMIT k`, collected;
  - Parquet, given a head start: the scores of every query were computed beforehand (by
    IndexTables, every match's `_score`, timed apart as "scoring every match") and stored in a
    column per query; Spark reads `WHERE s IS NOT NULL ORDER BY s DESC LIMIT k`;
  - raw tantivy4java (`io.indextables.spark.bench.RankedHarness`, when compiled): every split
    extracted and opened as a tantivy index, its `Searcher`'s BM25 top-k on a pool of `--cores`
    threads, merged. Its scores use each split's own statistics, so they differ from the
    table-wide ones; only its time is compared.

The IndexTables top-k must equal Parquet's (the same scores in the same order, within 1e-4
relative: the scores come from the first layout, and the layouts' statistics may differ in
the last digits), else the script exits 1. Writes <out>/ranked.json and .md, and prints it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datagen
from bench_session import add_session_args, local_session, write_report
from suite import harness_classpath

TYPEMAP_MESSAGE = "spark.indextables.indexing.typemap.message"
QUERY_CACHE = "spark.indextables.cache.queryCache.enabled"
LAYOUT = "spark.indextables.write.layout"
LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"
RANKED_HARNESS = "io.indextables.spark.bench.RankedHarness"


def two_term_queries(n: int) -> list[str]:
    """`n` distinct `a OR b` searches over the suite's message terms."""
    pairs = list(itertools.combinations(datagen.SEARCH_TERMS, 2))
    if n > len(pairs):
        raise ValueError(f"at most {len(pairs)} distinct queries, asked for {n}")
    # Spread over the terms: consecutive runs share no term where possible.
    order = sorted(range(len(pairs)), key=lambda i: (i * 11) % len(pairs))
    return [f"{pairs[i][0]} OR {pairs[i][1]}" for i in order[:n]]


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def _close(a: float, b: float, rel: float = 1e-4) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def run(args: argparse.Namespace) -> dict[str, Any]:
    out: Path = args.out.resolve()
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    spark = local_session("ranked", args.cores, args.driver_memory, {QUERY_CACHE: "false"})
    gen, source = datagen.generate(
        spark,
        args.rows,
        max(args.appends, 2 * args.cores),
        7,
        LOGHUB if LOGHUB.is_dir() else None,
    )
    gen.withColumn("id", F.monotonically_increasing_id()).write.parquet(str(data / "source"))
    src = spark.read.parquet(str(data / "source"))
    layouts = [s for s in args.layouts.split(",") if s]
    tables: dict[str, str] = {}
    for layout in layouts:
        path = str(data / f"indextables-{layout}")
        for i in range(args.appends):
            (
                src.where(F.col("id") % args.appends == i)
                .write.format("indextables")
                .option(TYPEMAP_MESSAGE, "text")
                .option(LAYOUT, layout)
                .mode("append")
                .save(path)
            )
        tables[layout] = path
    queries = two_term_queries(args.warmup + args.runs)
    first = tables[layouts[0]]

    # Parquet's head start: each query's scores in a column of its own.
    scored = src
    scoring_s: list[float] = []
    for j, q in enumerate(queries):
        t0 = time.perf_counter()
        scores = (
            spark.read.format("indextables")
            .load(first)
            .where(f"message indexquery '{q}'")
            .select("id", F.col("_score").alias(f"s{j}"))
        )
        scores.write.parquet(str(data / f"scores-{j}"))
        scoring_s.append(time.perf_counter() - t0)
        scored = scored.join(spark.read.parquet(str(data / f"scores-{j}")), "id", "left")
    scored.write.parquet(str(data / "parquet-scored"))
    parquet = spark.read.parquet(str(data / "parquet-scored"))

    def top_parquet(j: int) -> list[float]:
        col = f"s{j}"
        rows = parquet.where(F.col(col).isNotNull()).orderBy(F.col(col).desc()).limit(args.k)
        return [float(r[col]) for r in rows.collect()]

    def top_indextables(path: str, q: str) -> list[float]:
        rows = spark.sql(
            f"SELECT *, _score FROM indextables.`{path}` WHERE message indexquery '{q}' "
            f"ORDER BY _score DESC LIMIT {args.k}"
        ).collect()
        return [float(r["_score"]) for r in rows]

    result: dict[str, Any] = {
        "rows": args.rows,
        "appends": args.appends,
        "k": args.k,
        "runs": args.runs,
        "queries": queries,
        "source": source,
        "scoring_every_match_s": _median(scoring_s[args.warmup :]),
        "layouts": {},
    }
    parquet_s: list[float] = []
    expected: dict[int, list[float]] = {}
    for j in range(len(queries)):
        t0 = time.perf_counter()
        expected[j] = top_parquet(j)
        if j >= args.warmup:
            parquet_s.append(time.perf_counter() - t0)
    result["parquet_s"] = _median(parquet_s)
    mismatches: list[str] = []
    for layout, path in tables.items():
        times: list[float] = []
        for j, q in enumerate(queries):
            t0 = time.perf_counter()
            got = top_indextables(path, q)
            if j >= args.warmup:
                times.append(time.perf_counter() - t0)
            if len(got) != len(expected[j]) or not all(
                _close(a, b) for a, b in zip(got, expected[j])
            ):
                mismatches.append(f"{layout} {q!r}: {got} != Parquet's {expected[j]}")
        plan = (
            spark.sql(
                f"SELECT *, _score FROM indextables.`{path}` WHERE message indexquery "
                f"'{queries[-1]}' ORDER BY _score DESC LIMIT {args.k}"
            )
            ._jdf.queryExecution()
            .executedPlan()
            .toString()
        )
        splits = sorted(str(p) for p in Path(path).rglob("*.split"))
        result["layouts"][layout] = {
            "median_s": _median(times),
            "times_s": times,
            "splits": len(splits),
            "vs_parquet": result["parquet_s"] / _median(times),
            "pushed_top_n": "PushedTopN" in plan,
            "answered_on_driver": "AnsweredOnDriver: true" in plan,
        }
    result["mismatches"] = mismatches
    result["raw"] = _raw(args, tables[layouts[0]], queries, data)
    if result["raw"] and "median_s" in result["raw"]:
        for r in result["layouts"].values():
            r["vs_raw"] = r["median_s"] / result["raw"]["median_s"]
    spark.stop()
    return result


def _raw(args: argparse.Namespace, path: str, queries: list[str], data: Path) -> dict[str, Any]:
    cp = harness_classpath(RANKED_HARNESS)
    if cp is None:
        return {"skipped": f"{RANKED_HARNESS} is not compiled (build/sbt spark/Test/compile)"}
    splits = data / "raw-splits.txt"
    splits.write_text("\n".join(sorted(str(p) for p in Path(path).rglob("*.split"))) + "\n")
    qfile = data / "raw-queries.json"
    qfile.write_text(json.dumps(queries))
    res = data / "raw-result.json"
    cmd = [
        "java", "-Xmx4g", "-cp", cp, RANKED_HARNESS,
        "--splits", str(splits), "--queries", str(qfile), "--field", "message",
        "--k", str(args.k), "--threads", str(args.cores), "--work", str(data / "raw-work"),
        "--out", str(res),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{RANKED_HARNESS} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    raw = json.loads(res.read_text())
    times = [q["seconds"] for q in raw["queries"][args.warmup :]]
    return {"median_s": _median(times), "times_s": times, "splits": raw["splits"]}


def markdown(r: dict[str, Any]) -> list[str]:
    lines = [
        "# Ranked search: top-k by `_score`",
        "",
        f"{r['rows']:,} rows in {r['appends']} appends; top {r['k']} of a two-term `message` "
        f"search (a new pair each run: {', '.join(repr(q) for q in r['queries'])}); medians of "
        f"{r['runs']} runs after the warm-up; tantivy's query cache off.",
        "",
        "| What | Median | Parquet ÷ it | it ÷ raw tantivy4java |",
        "|---|---|---|---|",
    ]
    for layout, x in r["layouts"].items():
        lines.append(
            f"| IndexTables `{layout}` ({x['splits']} splits"
            f"{', on the driver' if x['answered_on_driver'] else ''}) | {x['median_s']:.3f} s | "
            f"{x['vs_parquet']:.1f} × | " + (f"{x['vs_raw']:.2f} × |" if "vs_raw" in x else "— |")
        )
    lines.append(f"| Spark over Parquet, scores precomputed | {r['parquet_s']:.3f} s | 1 × | — |")
    raw = r["raw"]
    if "median_s" in raw:
        lines.append(
            f"| raw tantivy4java, per-split BM25 ({raw['splits']} splits) | "
            f"{raw['median_s']:.3f} s | — | 1 × |"
        )
    else:
        lines.append(f"| raw tantivy4java | {raw.get('skipped')} | — | — |")
    lines += [
        "",
        f"Scoring every match of one query (`SELECT id, _score ... WHERE message indexquery`, "
        f"written to Parquet: Parquet's head start): {r['scoring_every_match_s']:.2f} s.",
        "",
        "Answers: " + ("every top-k equals Parquet's." if not r["mismatches"] else "MISMATCHES"),
    ]
    lines += [f"- {m}" for m in r["mismatches"]]
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--appends", type=int, default=20)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--layouts", default="splits,companion")
    add_session_args(p, "target/bench-ranked")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    result = run(args)
    write_report(args.out, "ranked", result, markdown(result))
    return 1 if result["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
