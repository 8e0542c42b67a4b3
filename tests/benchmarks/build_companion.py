"""BUILD INDEXTABLES COMPANION FOR PARQUET against the Spark write that made its source.

    .venv/bin/python tests/benchmarks/build_companion.py --rows 2000000 --appends 20 \\
        --runs 3 --warmup 1 --out target/bench-build-companion

Each round writes the benchmark suite's log rows (tests/benchmarks/datagen.py) as a fresh folder
of Parquet in `--appends` appended Spark writes (as a lake table grows), timed together, then
indexes that folder with `BUILD INDEXTABLES COMPANION FOR PARQUET` (`message` as text, the other
strings as raw terms) into a fresh index, timed; the goal is a build of at most 2 x the write.
After the last round, a selective search (a rare term on `message` and one host, a different
host each round, tantivy's query cache off) runs on the index and on the Parquet folder, side by
side in each round (which goes first alternates); both must give the same rows. Medians of
`--runs` rounds after `--warmup`. Writes <out>/build-companion.json and .md, and prints the table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datagen
from bench_session import add_session_args, local_session, write_report

QUERY_CACHE = "spark.indextables.cache.queryCache.enabled"
COLUMNS = "ts, level, component, host, latency_ms, message"
SEP = "[^\\p{L}\\p{N}]"
WORD = f"(?iu)(^|{SEP}){datagen.RARE_TERM}({SEP}|$)"
LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"


def _bytes(path: Path, suffix: str) -> int:
    return sum(p.stat().st_size for p in path.rglob(f"*{suffix}"))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--appends", type=int, default=20)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--queries", type=int, default=10, help="timed selective searches")
    add_session_args(p, "target/bench-build-companion")
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    spark = local_session("build-companion", args.cores, args.driver_memory)
    loghub = LOGHUB if LOGHUB.is_dir() else None
    per_append = args.rows // args.appends
    # The rows of each append, generated once and cached, so rounds time writes, not generation.
    chunks = []
    for i in range(args.appends):
        df, _ = datagen.generate(spark, per_append, args.cores, 100 + i, loghub)
        chunks.append(df.cache())
        chunks[-1].count()

    writes: list[float] = []
    builds: list[float] = []
    load_start = os.getloadavg()[0]
    shutil.rmtree(out / "rounds", ignore_errors=True)
    for round_ in range(args.warmup + args.runs):
        # New paths each round: a table deleted under a running session is not one to reuse.
        source, index = out / "rounds" / f"source-{round_}", out / "rounds" / f"index-{round_}"
        start = time.perf_counter()
        for chunk in chunks:
            chunk.write.mode("append").parquet(str(source))
        write_s = time.perf_counter() - start
        start = time.perf_counter()
        (built,) = spark.sql(
            f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}' "
            "INDEXING MODES ('message': 'text')"
        ).collect()
        build_s = time.perf_counter() - start
        if built.status != "success":
            print(f"the build failed in round {round_}: {built}", file=sys.stderr)
            return 1
        print(f"round {round_}: write {write_s:.2f} s, build {build_s:.2f} s", file=sys.stderr)
        if round_ >= args.warmup:
            writes.append(write_s)
            builds.append(build_s)

    reader = spark.read.format("indextables").option(QUERY_CACHE, "false")
    reader.load(str(index)).createOrReplaceTempView("idx")
    spark.read.parquet(str(source)).createOrReplaceTempView("pq")
    search: dict[str, list[float]] = {"index": [], "parquet": []}
    answers: list[int] = []
    for round_ in range(2 + args.queries):
        host = datagen.HOSTS[round_ % len(datagen.HOSTS)]
        queries = {
            "index": f"SELECT {COLUMNS} FROM idx WHERE message indexquery '{datagen.RARE_TERM}' "
            "AND host = :h",
            # The word as tantivy's default tokenizer finds it: any case, between non-letters.
            "parquet": f"SELECT {COLUMNS} FROM pq WHERE message RLIKE :w AND host = :h",
        }
        got = {}
        for name in list(queries)[:: 1 if round_ % 2 == 0 else -1]:
            start = time.perf_counter()
            params = {"h": host} if name == "index" else {"h": host, "w": WORD}
            rows = spark.sql(queries[name], args=params).collect()
            if round_ >= 2:
                search[name].append(time.perf_counter() - start)
            got[name] = sorted(tuple(str(v) for v in r) for r in rows)
        if got["index"] != got["parquet"]:
            print(f"index and Parquet disagree for host {host}", file=sys.stderr)
            return 1
        answers.append(len(got["index"]))

    write_s, build_s = statistics.median(writes), statistics.median(builds)
    result: dict[str, Any] = {
        "rows": per_append * args.appends,
        "appends": args.appends,
        "cores": args.cores,
        "runs": args.runs,
        "warmup": args.warmup,
        "load_average_start": load_start,
        "load_average_end": os.getloadavg()[0],
        "write_s": writes,
        "build_s": builds,
        "write_median_s": write_s,
        "build_median_s": build_s,
        "build_over_write": build_s / write_s,
        "parquet_bytes": _bytes(source, ".parquet"),
        "split_bytes": _bytes(index, ".split"),
        "splits": len(list(index.rglob("*.split"))),
        "search_index_s": statistics.median(search["index"]),
        "search_parquet_s": statistics.median(search["parquet"]),
        "search_rows_median": statistics.median(answers),
    }
    r = result
    lines = [
        f"# BUILD INDEXTABLES COMPANION: {r['rows']:,} rows in {args.appends} appended "
        f"Parquet writes, {args.cores} cores",
        "",
        f"Medians of {args.runs} rounds after {args.warmup} warm-up; load average "
        f"{r['load_average_start']:.2f} at the start, {r['load_average_end']:.2f} at the end.",
        "",
        "| | time | bytes |",
        "|---|---|---|",
        f"| Spark's Parquet writes | {write_s:.2f} s | {r['parquet_bytes'] / 1e6:.1f} MB |",
        f"| BUILD INDEXTABLES COMPANION ({r['splits']} splits) | {build_s:.2f} s | "
        f"{r['split_bytes'] / 1e6:.1f} MB |",
        "",
        f"The build takes **{r['build_over_write']:.2f} x** the writes' time (goal <= 2); its "
        f"splits are {r['split_bytes'] / r['parquet_bytes']:.2f} x the Parquet bytes.",
        f"A selective search (rare term and host, a new host each query, median of "
        f"{args.queries}, {r['search_rows_median']:.0f} rows): index "
        f"{r['search_index_s']:.3f} s, Parquet {r['search_parquet_s']:.3f} s "
        f"({r['search_parquet_s'] / r['search_index_s']:.1f} x faster), same rows every time.",
    ]
    write_report(out, "build-companion", result, lines)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
