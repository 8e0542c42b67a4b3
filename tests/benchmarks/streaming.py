"""Streaming ingest lag: a stream of Loghub lines into an IndexTables sink with merge on write.

    .venv/bin/python tests/benchmarks/streaming.py --duration-s 600 --rows-per-second 1000 \\
        --trigger-s 10 --out target/bench-streaming

Issue 32's goal: a stream of 1,000 rows/s of Loghub lines, with 10 s triggers, keeps up on 2
cores with merge on write on. Spark's `rate` source makes `--rows-per-second` rows a second,
each stamped with the time it was made (`timestamp`); each row takes a real log line of the
loghub files in ../shared/data/loghub (their `Content` column: one entry per line, in turn),
with its level and component, and a host. The stream (`processingTime` triggers of
`--trigger-s`) writes into a new IndexTables table (`message` as text) with
`spark.indextables.mergeOnWrite.enabled`, for `--duration-s`; then it stops and the table is
checked: it must hold every row the batches read, once (exit 1 otherwise).

For each batch (from Spark's StreamingQueryProgress and the table's history, whose
`STREAMING UPDATE` versions record the batch's epoch and their commit time):
  - `lag_s`: the commit time less the newest row's timestamp (the event-time statistics of a
    zero-delay watermark): how far the committed data trails the source when it lands;
  - `oldest_row_s`: the commit time less the oldest row's timestamp (the longest a row waited);
  - the batch's duration against the trigger interval, and Spark's input and processed rows per
    second.
It keeps up when the batches finish within the trigger interval (the median and the 90th
percentile) and the lag does not grow (the median lag of the last third of the batches within
a trigger interval of that of the first third). Also reported: the split count at the end, and
once the merges running at the end have finished, and the merge-on-write jobs.

Without ../shared/data/loghub (a fresh clone) the script prints why and exits 0, measuring
nothing. Writes <out>/streaming.json and .md, and prints the table.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datagen
from bench_session import add_session_args, local_session, write_report

TYPEMAP_MESSAGE = "spark.indextables.indexing.typemap.message"
LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"
MERGE_ON_WRITE = "spark.indextables.mergeOnWrite.enabled"


def loghub_lines(folder: Path) -> list[tuple[int, str, str, str]]:
    """Every line of the loghub `*_structured.csv` files: (index, level, component, content)."""
    out: list[tuple[int, str, str, str]] = []
    for path in sorted(folder.glob("*_structured.csv")):
        system = path.name.split("_")[0]
        with path.open(newline="", encoding="utf-8", errors="replace") as handle:
            for row in csv.DictReader(handle):
                content = (row.get("Content") or "").strip()
                if content:
                    level = (row.get("Level") or "INFO").strip().upper() or "INFO"
                    component = (row.get("Component") or system).strip() or system
                    out.append((len(out), level, component, content))
    return out


def source_stream(spark: SparkSession, lines: list[tuple[int, str, str, str]], rps: int) -> Any:
    """The rate source's rows, each with the loghub line `value % len(lines)` and a host."""
    # Cached once: every batch's broadcast then reads it from memory, not from its tasks.
    table = spark.createDataFrame(
        lines, "line long, level string, component string, message string"
    ).cache()
    table.count()
    hosts = F.array(*[F.lit(h) for h in datagen.HOSTS])
    return (
        spark.readStream.format("rate")
        .option("rowsPerSecond", rps)
        .option("numPartitions", 2)
        .load()
        .withWatermark("timestamp", "0 seconds")  # for progress.eventTime: min and max per batch
        .withColumn("line", F.col("value") % len(lines))
        .join(F.broadcast(table), "line")
        .select(
            F.col("value").alias("id"),
            F.col("timestamp").alias("ts"),
            "level",
            "component",
            F.element_at(hosts, (F.col("value") % len(datagen.HOSTS) + 1).cast("int")).alias(
                "host"
            ),
            "message",
        )
    )


def _instant(s: str) -> float:
    """Seconds since the epoch of Spark's progress times (`2026-11-27T10:00:00.000Z`)."""
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def _commit_times(spark: SparkSession, path: str) -> dict[int, float]:
    """Each streamed batch's commit time (seconds since the epoch), by epoch, from the history."""
    out: dict[int, float] = {}
    for h in spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{path}'").collect():
        params = h.operation_parameters or {}
        if h.operation == "STREAMING UPDATE" and "epochId" in params:
            # PySpark hands a TIMESTAMP back as a naive datetime in the local time zone.
            out[int(params["epochId"])] = h.timestamp.timestamp()
    return out


def _merge_jobs(spark: SparkSession, path: str) -> list[dict[str, Any]]:
    return [
        {
            "status": j.status,
            "trigger_version": j.trigger_version,
            "groups": j.total_groups,
            "merged_files": j.merged_files,
        }
        for j in spark.sql("DESCRIBE INDEXTABLES MERGE JOBS").collect()
        if j.table_path.rstrip("/").endswith(path.rstrip("/"))
    ]


def _num_files(spark: SparkSession, path: str) -> int:
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    return int(state.num_files)


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(args: argparse.Namespace, lines: list[tuple[int, str, str, str]]) -> dict[str, Any]:
    out: Path = args.out.resolve()
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    table, checkpoint = str(data / "table"), str(data / "checkpoint")
    spark = local_session(
        "streaming",
        args.cores,
        args.driver_memory,
        {
            "spark.sql.shuffle.partitions": str(args.cores),
            "spark.sql.streaming.numRecentProgressUpdates": "100000",
        },
    )
    query = (
        source_stream(spark, lines, args.rows_per_second)
        .writeStream.format("indextables")
        .option("checkpointLocation", checkpoint)
        .option(TYPEMAP_MESSAGE, "text")
        .option(MERGE_ON_WRITE, "true")
        .trigger(processingTime=f"{args.trigger_s} seconds")
        .start(table)
    )
    started = time.time()
    splits_seen: list[tuple[float, int]] = []
    while time.time() - started < args.duration_s:
        time.sleep(min(args.trigger_s, max(0.0, args.duration_s - (time.time() - started))))
        if (Path(table) / "_transaction_log").is_dir():
            splits_seen.append((time.time() - started, _num_files(spark, table)))
    query.stop()
    progress: list[dict[str, Any]] = query.recentProgress
    splits_at_stop = _num_files(spark, table)
    deadline = time.time() + 600
    while any(j["status"] in ("RUNNING", "PENDING") for j in _merge_jobs(spark, table)):
        if time.time() > deadline:
            break
        time.sleep(1)
    splits_after_merges = _num_files(spark, table)
    commits = _commit_times(spark, table)

    batches: list[dict[str, Any]] = []
    for p in progress:
        n = int(p["numInputRows"])
        if n == 0:
            continue
        epoch = int(p["batchId"])
        times = p.get("eventTime") or {}
        committed = commits.get(epoch)
        duration = float(p["durationMs"].get("triggerExecution", 0)) / 1000.0
        b: dict[str, Any] = {
            "batch": epoch,
            "rows": n,
            "duration_s": duration,
            "add_batch_s": float(p["durationMs"].get("addBatch", 0)) / 1000.0,
            "input_rows_per_s": p.get("inputRowsPerSecond"),
            "processed_rows_per_s": p.get("processedRowsPerSecond"),
            "committed": committed is not None,
        }
        if committed is not None and "max" in times:
            b["lag_s"] = committed - _instant(times["max"])
            b["oldest_row_s"] = committed - _instant(times["min"])
        batches.append(b)

    rows_read = sum(b["rows"] for b in batches)
    stored = spark.read.format("indextables").load(table)
    (counts,) = stored.agg(
        F.count("*").alias("n"), F.countDistinct("id").alias("ids"), F.max("id").alias("last")
    ).collect()
    lags = [b["lag_s"] for b in batches if "lag_s" in b]
    waits = [b["oldest_row_s"] for b in batches if "lag_s" in b]
    durations = [b["duration_s"] for b in batches]
    if not lags:
        raise RuntimeError(f"no batch committed rows with event times: {progress[-3:]}")
    third = max(1, len(lags) // 3)
    early, late = statistics.median(lags[:third]), statistics.median(lags[-third:])
    keeps_up = (
        statistics.median(durations) <= args.trigger_s
        and _pct(durations, 0.9) <= args.trigger_s
        and late - early <= args.trigger_s
    )
    result: dict[str, Any] = {
        "rows_per_second": args.rows_per_second,
        "trigger_s": args.trigger_s,
        "duration_s": args.duration_s,
        "cores": args.cores,
        "loghub_lines": len(lines),
        "batches": batches,
        "rows_read": rows_read,
        "rows_stored": int(counts.n),
        "distinct_ids_stored": int(counts.ids),
        # The rate source numbers its rows 0, 1, ... and batches commit in order: the table
        # holds each row once when its ids are distinct and none is missing. (A batch the stop
        # interrupted after its commit has rows but no progress: rows_read may be fewer.)
        "every_row_once": int(counts.n) == int(counts.ids) == int(counts.last) + 1
        and int(counts.n) >= rows_read,
        "median_lag_s": statistics.median(lags),
        "max_lag_s": max(lags),
        "median_oldest_row_s": statistics.median(waits),
        "max_oldest_row_s": max(waits),
        "lag_first_third_s": early,
        "lag_last_third_s": late,
        "median_batch_s": statistics.median(durations),
        "p90_batch_s": _pct(durations, 0.9),
        "max_batch_s": max(durations),
        "keeps_up": keeps_up,
        "splits_over_time": splits_seen,
        "splits_at_stop": splits_at_stop,
        "splits_after_merges": splits_after_merges,
        "merge_jobs": _merge_jobs(spark, table),
    }
    spark.stop()
    if not args.keep_data:
        shutil.rmtree(data, ignore_errors=True)
    return result


def markdown(r: dict[str, Any]) -> list[str]:
    merges = r["merge_jobs"]
    lines = [
        f"# Streaming ingest: {r['rows_per_second']:,} Loghub rows/s, {r['trigger_s']} s "
        f"triggers, merge on write, {r['cores']} cores",
        "",
        f"{r['duration_s']} s of Spark's rate source ({r['loghub_lines']:,} loghub lines in "
        f"turn) into an IndexTables sink; {len(r['batches'])} batches with rows, "
        f"{r['rows_read']:,} rows. Lag: a batch's commit time less its newest row's timestamp.",
        "",
        "| | median | max |",
        "|---|---|---|",
        f"| lag (commit − newest row) | {r['median_lag_s']:.2f} s | {r['max_lag_s']:.2f} s |",
        f"| oldest row's wait (commit − oldest row) | {r['median_oldest_row_s']:.2f} s | "
        f"{r['max_oldest_row_s']:.2f} s |",
        f"| batch duration (trigger {r['trigger_s']} s) | {r['median_batch_s']:.2f} s | "
        f"{r['max_batch_s']:.2f} s |",
        "",
        f"Keeps up: **{'yes' if r['keeps_up'] else 'no'}** (90th percentile batch "
        f"{r['p90_batch_s']:.2f} s; median lag of the first third of the batches "
        f"{r['lag_first_third_s']:.2f} s, of the last third {r['lag_last_third_s']:.2f} s).",
        "",
        f"Splits: {r['splits_at_stop']} when the stream stopped, {r['splits_after_merges']} once "
        f"the merges then running had finished; {len(merges)} merge-on-write jobs "
        f"({sum(1 for j in merges if j['status'] == 'COMPLETED')} completed, "
        f"{sum(j['merged_files'] or 0 for j in merges)} splits merged).",
        "",
        "Rows: "
        + (
            f"the table holds each of the {r['rows_stored']:,} rows the source made once."
            if r["every_row_once"]
            else f"MISMATCH: {r['rows_stored']:,} stored ({r['distinct_ids_stored']:,} distinct) "
            f"against {r['rows_read']:,} read"
        ),
        "",
        "| batch | rows | duration | lag | input rows/s | processed rows/s |",
        "|---|---|---|---|---|---|",
    ]
    for b in r["batches"]:
        lag = f"{b['lag_s']:.2f} s" if "lag_s" in b else "—"
        lines.append(
            f"| {b['batch']} | {b['rows']:,} | {b['duration_s']:.2f} s | {lag} | "
            f"{b['input_rows_per_s'] or 0:,.0f} | {b['processed_rows_per_s'] or 0:,.0f} |"
        )
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration-s", type=float, default=600.0)
    p.add_argument("--rows-per-second", type=int, default=1000)
    p.add_argument("--trigger-s", type=int, default=10)
    p.add_argument("--loghub", type=Path, default=LOGHUB)
    p.add_argument("--keep-data", action="store_true", help="keep <out>/data (table, checkpoint)")
    add_session_args(p, "target/bench-streaming", "4g")
    args = p.parse_args()
    if not args.loghub.is_dir():
        print(f"skipped: the loghub folder {args.loghub} is absent (it is not part of the repo)")
        return 0
    lines = loghub_lines(args.loghub)
    args.out.mkdir(parents=True, exist_ok=True)
    result = run(args, lines)
    write_report(args.out, "streaming", result, markdown(result))
    return 0 if result["every_row_once"] else 1


if __name__ == "__main__":
    sys.exit(main())
