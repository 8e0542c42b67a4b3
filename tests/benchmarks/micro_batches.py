"""Searches on a table a stream made in many micro-batches (merge on write on), against the same
rows written in one batch write, and against Parquet.

    .venv/bin/python tests/benchmarks/micro_batches.py --batches 300 --rows-per-batch 10000 \\
        --runs 5 --warmup 1 --out target/bench-micro-batches

Issue 32's goal: a search on a table made by 300 micro-batches (merge on write on) is no slower
than the same search on a batch-written table of the same rows. Generates the benchmark suite's
log rows (tests/benchmarks/datagen.py: loghub templates from ../shared/data/loghub, else the
built-in ones) as a Parquet folder of one file per batch (`--rows-per-batch` rows each: 10,000
is 10 s of a 1,000 rows/s stream), then writes them three ways, each timed:

  - `streamed`: a Structured Streaming query over that folder (`maxFilesPerTrigger` 1, trigger
    `availableNow`: one micro-batch per file) into a new IndexTables table with
    `spark.indextables.mergeOnWrite.enabled`; the merges still running when the stream ends
    are waited for, and the split count is reported;
  - `batch`: one `df.write.format("indextables")` of the folder;
  - `parquet`: one `df.write.parquet` of the folder.

All with `message` as text. Then, round by round (which table goes first turns each round),
the same queries on each, different in every round (a host, a latency window and a message
term: `datagen.selective_condition`; and a two-term top 10 by `_score`, as ranked.py varies
them) so no cache answers one from an earlier one, tantivy's query cache off:

  - `selective`: the selective search, collected (Parquet: the term as an `rlike` on token
    boundaries, as the suite writes it);
  - `top10`: `ORDER BY _score DESC LIMIT 10` of a two-term `message indexquery` (IndexTables
    tables only: Parquet has no `_score`).

Every selective answer must be the same rows on the three tables, and every top 10 the same
scores on both IndexTables tables (within 1e-4 relative), else the script exits 1. Reports
medians after `--warmup` rounds, streamed ÷ batch (the goal: at most 1) and Parquet ÷ each.
Writes <out>/micro-batches.json and .md, and prints the table.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datagen
from bench_session import add_session_args, local_session, write_report
from ranked import two_term_queries

TYPEMAP_MESSAGE = "spark.indextables.indexing.typemap.message"
QUERY_CACHE = "spark.indextables.cache.queryCache.enabled"
MERGE_ON_WRITE = "spark.indextables.mergeOnWrite.enabled"
MERGE_TARGET_SIZE = "spark.indextables.mergeOnWrite.targetSize"
LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"
TABLES = ("streamed", "batch", "parquet")
TOKEN_SEPARATOR = "[^\\p{L}\\p{N}]"


def _parquet_search(df: DataFrame, run: int) -> DataFrame:
    """The run-th selective search as a Parquet user writes it: the term as an rlike on the
    token boundaries of tantivy's default tokenizer (letters and digits, lower-cased)."""
    head, term = datagen.selective_condition(run).rsplit(" AND message indexquery ", 1)
    word = term.strip("'")
    pattern = f"(?iu)(^|{TOKEN_SEPARATOR}){word}({TOKEN_SEPARATOR}|$)"
    return df.where(head).where(F.col("message").rlike(pattern))


def _num_files(spark: SparkSession, path: str) -> int:
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    return int(state.num_files)


def _split_rows(spark: SparkSession, path: str) -> list[int]:
    """Rows of each live split, largest first."""
    rows = spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()
    return sorted((int(r.num_records) for r in rows), reverse=True)


def _wait_for_merges(spark: SparkSession, path: str, patience_s: float = 1800.0) -> int:
    """Waits until no merge on write of `path` runs or is owed (a merge that finds no slot free
    is listed PENDING until it starts); returns how many merge jobs it had."""
    deadline = time.monotonic() + patience_s
    while True:
        jobs = [
            j
            for j in spark.sql("DESCRIBE INDEXTABLES MERGE JOBS").collect()
            if j.table_path.rstrip("/").endswith(path.rstrip("/"))
        ]
        if all(j.status not in ("RUNNING", "PENDING") for j in jobs) or time.monotonic() > deadline:
            return len(jobs)
        time.sleep(1)


def _close(a: float, b: float, rel: float = 1e-4) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def run(args: argparse.Namespace) -> dict[str, Any]:
    out: Path = args.out.resolve()
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    spark = local_session(
        "micro-batches",
        args.cores,
        args.driver_memory,
        {QUERY_CACHE: "false", "spark.sql.shuffle.partitions": str(args.cores)},
    )
    rows = args.batches * args.rows_per_batch
    loghub = LOGHUB if LOGHUB.is_dir() else None
    gen, source_kind = datagen.generate(spark, rows, args.batches, 13, loghub)
    source = str(data / "source")
    gen.write.parquet(source)  # one file per generating task: one per batch
    paths = {t: str(data / t) for t in TABLES}
    write_s: dict[str, float] = {}
    merge_options = (
        {MERGE_TARGET_SIZE: args.merge_target_size} if args.merge_target_size is not None else {}
    )

    start = time.perf_counter()
    query = (
        spark.readStream.schema(datagen.BENCH_SCHEMA)
        .option("maxFilesPerTrigger", 1)
        .parquet(source)
        .writeStream.format("indextables")
        .option("checkpointLocation", str(data / "checkpoint"))
        .option(TYPEMAP_MESSAGE, "text")
        .option(MERGE_ON_WRITE, "true")
        .options(**merge_options)
        .trigger(availableNow=True)
        .start(paths["streamed"])
    )
    query.awaitTermination()
    write_s["streamed"] = time.perf_counter() - start
    # Each micro-batch that wrote rows is one version of the table, whose commit record holds
    # the batch's epoch (the first is recorded as CREATE, the others as STREAMING UPDATE);
    # recentProgress keeps only Spark's last 100 progress updates.
    micro_batches = (
        spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{paths['streamed']}'")
        .filter("operation_parameters['epochId'] IS NOT NULL")
        .count()
    )
    splits_at_end = _num_files(spark, paths["streamed"])
    merge_jobs = _wait_for_merges(spark, paths["streamed"])
    write_s["streamed_and_merges"] = time.perf_counter() - start

    start = time.perf_counter()
    spark.read.parquet(source).write.format("indextables").option(TYPEMAP_MESSAGE, "text").save(
        paths["batch"]
    )
    write_s["batch"] = time.perf_counter() - start
    start = time.perf_counter()
    spark.read.parquet(source).write.parquet(paths["parquet"])
    write_s["parquet"] = time.perf_counter() - start

    # IndexTables tables by path, as ranked.py names them (`_score` is a column of the relation).
    name = {t: f"indextables.`{paths[t]}`" for t in ("streamed", "batch")}
    parquet = spark.read.parquet(paths["parquet"])
    stored = {t: spark.table(name[t]).count() for t in name}
    stored["parquet"] = parquet.count()

    rounds = args.warmup + args.runs
    pairs = two_term_queries(rounds)
    cols = ["ts", "host", "latency_ms", "message"]
    times: dict[str, dict[str, list[float]]] = {
        "selective": {t: [] for t in TABLES},
        "top10": {t: [] for t in TABLES[:2]},
    }
    mismatches: list[str] = []
    for r in range(rounds):
        order = TABLES if r % 2 == 0 else TABLES[::-1]
        answers: dict[str, list[str]] = {}
        for t in order:
            t0 = time.perf_counter()
            if t == "parquet":
                got = _parquet_search(parquet, r).select(*cols).collect()
            else:
                where = datagen.selective_condition(r)
                got = spark.sql(f"SELECT {', '.join(cols)} FROM {name[t]} WHERE {where}").collect()
            if r >= args.warmup:
                times["selective"][t].append(time.perf_counter() - t0)
            answers[t] = sorted(repr(tuple(x)) for x in got)
        if not answers["streamed"] == answers["batch"] == answers["parquet"]:
            mismatches.append(
                f"selective round {r}: streamed {len(answers['streamed'])} rows, batch "
                f"{len(answers['batch'])}, parquet {len(answers['parquet'])}"
            )
        scores: dict[str, list[float]] = {}
        for t in [x for x in order if x != "parquet"]:
            t0 = time.perf_counter()
            got = spark.sql(
                f"SELECT *, _score FROM {name[t]} WHERE message indexquery '{pairs[r]}' "
                "ORDER BY _score DESC LIMIT 10"
            ).collect()
            if r >= args.warmup:
                times["top10"][t].append(time.perf_counter() - t0)
            scores[t] = [float(x["_score"]) for x in got]
        if len(scores["streamed"]) != len(scores["batch"]) or not all(
            _close(a, b) for a, b in zip(scores["streamed"], scores["batch"])
        ):
            mismatches.append(f"top10 {pairs[r]!r}: {scores['streamed']} != {scores['batch']}")

    medians = {q: {t: statistics.median(v) for t, v in by.items()} for q, by in times.items()}
    result: dict[str, Any] = {
        "batches": args.batches,
        "rows_per_batch": args.rows_per_batch,
        "rows": rows,
        "cores": args.cores,
        "runs": args.runs,
        "warmup": args.warmup,
        "source": source_kind,
        "micro_batches": micro_batches,
        "rows_stored": stored,
        "splits": {
            "streamed_at_end": splits_at_end,
            "streamed": _num_files(spark, paths["streamed"]),
            "batch": _num_files(spark, paths["batch"]),
        },
        "split_rows": {t: _split_rows(spark, paths[t]) for t in TABLES[:2]},
        "merge_jobs": merge_jobs,
        "merge_target_size": args.merge_target_size or "default",
        "write_s": write_s,
        "times_s": times,
        "median_s": medians,
        "streamed_over_batch": {q: m["streamed"] / m["batch"] for q, m in medians.items()},
        "parquet_over": {
            t: medians["selective"]["parquet"] / medians["selective"][t] for t in TABLES[:2]
        },
        "queries": {
            "selective": [datagen.selective_condition(r) for r in range(rounds)],
            "top10": pairs,
        },
        "mismatches": mismatches,
    }
    if any(n != rows for n in stored.values()):
        mismatches.append(f"rows stored {stored}, not {rows} each")
    spark.stop()
    if not args.keep_data:
        shutil.rmtree(data, ignore_errors=True)
    return result


def markdown(r: dict[str, Any]) -> list[str]:
    m, s, w = r["median_s"], r["splits"], r["write_s"]
    lines = [
        f"# A table of {r['batches']} micro-batches against one batch write, {r['cores']} cores",
        "",
        f"{r['rows']:,} rows ({r['source']}), streamed as {r['micro_batches']} micro-batches of "
        f"{r['rows_per_batch']:,} rows with merge on write (target size "
        f"{r['merge_target_size']}; {r['merge_jobs']} merge jobs; "
        f"{s['streamed_at_end']} splits when the stream ended, {s['streamed']} once its merges "
        f"finished), and written once ({s['batch']} splits). Medians of {r['runs']} rounds after "
        f"{r['warmup']} warm-up rounds, each query different in each round, tantivy's query "
        "cache off.",
        "",
        "| Query | streamed | batch | streamed ÷ batch | Parquet | Parquet ÷ streamed |",
        "|---|---|---|---|---|---|",
        f"| selective search (host, latency window, indexquery term) | "
        f"{m['selective']['streamed']:.3f} s | {m['selective']['batch']:.3f} s | "
        f"{r['streamed_over_batch']['selective']:.2f} × | {m['selective']['parquet']:.3f} s | "
        f"{r['parquet_over']['streamed']:.1f} × |",
        f"| top 10 by `_score` of a two-term indexquery | {m['top10']['streamed']:.3f} s | "
        f"{m['top10']['batch']:.3f} s | {r['streamed_over_batch']['top10']:.2f} × | — | — |",
        "",
        "Rows per split, largest first: streamed "
        + ", ".join(f"{n:,}" for n in r["split_rows"]["streamed"])
        + "; batch "
        + ", ".join(f"{n:,}" for n in r["split_rows"]["batch"])
        + ".",
        "",
        f"Writes: the stream {w['streamed']:.1f} s ({w['streamed_and_merges']:.1f} s with its "
        f"merges), one batch write {w['batch']:.1f} s, Parquet {w['parquet']:.1f} s.",
        "",
        "Answers: "
        + ("every query gave the same rows (or scores) on every table." if not r["mismatches"]
           else "MISMATCHES"),
    ]  # fmt: skip
    lines += [f"- {x}" for x in r["mismatches"]]
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", type=int, default=300)
    p.add_argument("--rows-per-batch", type=int, default=10_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument(
        "--merge-target-size",
        help="the stream's spark.indextables.mergeOnWrite.targetSize (100M, 4G); default: its own",
    )
    p.add_argument("--keep-data", action="store_true", help="keep <out>/data (the tables)")
    add_session_args(p, "target/bench-micro-batches", "4g")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    result = run(args)
    write_report(args.out, "micro-batches", result, markdown(result))
    return 1 if result["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
