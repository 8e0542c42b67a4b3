"""The benchmark's log dataset, generated in Spark tasks so memory stays bounded at any N.

Messages tile real log templates: every row of the loghub `*_structured.csv` files (column
`EventTemplate`) is one entry, so templates appear as often as they do in the real logs; without
the shared data folder, tests/logdata.py's built-in templates are used. Each `<*>` slot is
refilled with a fresh value (tests/logdata.py's fillers: numbers, IPs, ids, paths), so the
vocabulary keeps growing with N. A rare marker sentence (RARE_TEMPLATE) is mixed in at
RARE_RATE, so the rare-term query matches at most 0.01% of rows at every N.
"""

from __future__ import annotations

import csv
import datetime as dt
import random
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import (
    DoubleType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

# tests/, for logdata, when this runs as a script or from tests/benchmarks alone.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import logdata

BENCH_SCHEMA = StructType(
    [
        StructField("ts", TimestampType(), True),
        StructField("level", StringType(), True),
        StructField("component", StringType(), True),
        StructField("host", StringType(), True),
        StructField("latency_ms", DoubleType(), True),
        StructField("message", StringType(), True),
    ]
)
COLUMNS = [f.name for f in BENCH_SCHEMA.fields]

RARE_TERM = "quarantined"
RARE_TEMPLATE = "Replica <*> quarantined after checksum mismatch on segment <*>"
RARE_RATE = 0.00005  # 0.005% of rows: the rare-term query stays under 0.01%
HOSTS = [f"node-{i:02d}.dc{1 + i % 3}.example.com" for i in range(1, 49)]
START = dt.datetime(2024, 3, 1, 0, 0, 0)

# Message terms of the selective searches the benchmarks vary from run to run.
SEARCH_TERMS = ["error", "failed", "connection", "timeout", "session", "user", "block", "exception"]


def selective_condition(run: int) -> str:
    """The run-th selective search condition: a different host, latency window and message term
    each run, so that no cache answers a timed query from an earlier one."""
    host = HOSTS[(run * 7) % len(HOSTS)]
    low = 20 + (run * 13) % 160
    term = SEARCH_TERMS[run % len(SEARCH_TERMS)]
    return (
        f"host = '{host}' AND latency_ms >= {low} AND latency_ms < {low + 40} "
        f"AND message indexquery '{term}'"
    )


Template = tuple[str, Optional[str], str]  # component, level (None = draw one), template


def load_templates(loghub_dir: Path | None) -> tuple[list[Template], str]:
    """One entry per loghub log line (so frequent templates stay frequent), else the built-ins."""
    out: list[Template] = []
    if loghub_dir is not None and loghub_dir.is_dir():
        for path in sorted(loghub_dir.glob("*_structured.csv")):
            system = path.name.split("_")[0]
            with path.open(newline="", encoding="utf-8", errors="replace") as handle:
                for row in csv.DictReader(handle):
                    template = (row.get("EventTemplate") or "").strip()
                    if template:
                        component = (row.get("Component") or system).strip() or system
                        level = logdata._normalise_level(row.get("Level") or "")
                        out.append((component, level, template))
        if out:
            return (
                out,
                f"loghub templates from {loghub_dir} (github.com/logpai/loghub), {len(out)} lines",
            )
    out = [(t.component, t.level, t.template) for t in logdata.builtin_templates()]
    return out, "built-in templates (tests/logdata.py)"


def _chunk_rows(
    chunk: int, rows: int, first_row: int, seed: int, templates: list[Template]
) -> Iterator[tuple[object, ...]]:
    """The rows of one chunk, deterministic for (seed, chunk); a generator (bounded memory)."""
    rng = random.Random(seed * 1_000_003 + chunk)
    fillers = logdata._slot_fillers(rng)
    levels, weights = logdata.LEVELS, logdata._LEVEL_WEIGHTS
    seconds = first_row * 3.0
    level: str | None
    for _ in range(rows):
        if rng.random() < RARE_RATE:
            component, level, template = "storage.Replica", "WARN", RARE_TEMPLATE
        else:
            component, level, template = templates[rng.randrange(len(templates))]
        if level is None:
            level = rng.choices(levels, weights)[0]
        seconds += rng.expovariate(1 / 3.0)
        ts = START + dt.timedelta(seconds=round(seconds, 3))
        latency = round(rng.lognormvariate(3.0, 1.1), 3)
        yield (
            None if rng.random() < 0.002 else ts,
            None if rng.random() < 0.005 else level,
            component,
            None if rng.random() < 0.005 else HOSTS[rng.randrange(len(HOSTS))],
            None if rng.random() < 0.01 else latency,
            logdata._fill(template, rng, fillers),
        )


def generate(
    spark: SparkSession,
    rows: int,
    partitions: int,
    seed: int,
    loghub_dir: Path | None,
) -> tuple[DataFrame, str]:
    """A DataFrame of `rows` log rows in `partitions` partitions, generated by Spark tasks."""
    from pyspark import cloudpickle

    # Workers cannot import tests/ modules: ship them by value with the task closures.
    cloudpickle.register_pickle_by_value(logdata)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    templates, source = load_templates(loghub_dir)
    shared = spark.sparkContext.broadcast(templates)
    base, extra = divmod(rows, partitions)
    sizes = [base + (1 if i < extra else 0) for i in range(partitions)]
    firsts = [sum(sizes[:i]) for i in range(partitions)]

    def make(index: int, _it: Iterable[int]) -> Iterator[tuple[object, ...]]:
        return _chunk_rows(index, sizes[index], firsts[index], seed, shared.value)

    rdd = spark.sparkContext.parallelize(range(partitions), partitions).mapPartitionsWithIndex(make)
    return spark.createDataFrame(rdd, BENCH_SCHEMA, verifySchema=False), source
