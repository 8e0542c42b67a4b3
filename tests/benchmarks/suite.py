"""The benchmark suite: ingest and queries on IndexTables (both layouts: `splits`, and
`companion`, Parquet files beside index-only splits) against Parquet, noop and the raw
tantivy4java ceilings, every figure measured side by side in one run (see README.md).

Entry point: `run_suite(Config(...))`, used by run.py (the command line) and by
tests/test_benchmark_smoke.py (tiny N, one run).
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

# tests/benchmarks (datagen) and tests/ (helpers), whoever imports this module.
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import datagen
import indextables
from helpers import jvm, plan_nodes

BENCH_DIR = Path(__file__).resolve().parent
TESTS_DIR = BENCH_DIR.parent
REPO_ROOT = TESTS_DIR.parent
HARNESS_CLASS = "io.indextables.spark.bench.CeilingHarness"
TEST_CLASSES = REPO_ROOT / "jvm" / "target" / "scala-2.12" / "test-classes"
TYPEMAP_MESSAGE = "spark.indextables.indexing.typemap.message"
LAYOUT = "spark.indextables.write.layout"
LOG_DIR = "_transaction_log"
ROWS_PER_SPLIT = 1_000_000  # the product's default spark.indextables.maxRowsPerSplit


@dataclass
class Config:
    rows: int = 2_000_000
    runs: int = 5
    warmup: int = 1
    out: Path = REPO_ROOT / "target" / "bench"
    seed: int = 20240301
    cores: int = 2
    driver_memory: str = "4g"
    loghub_dir: Path | None = REPO_ROOT.parent / "shared" / "data" / "loghub"
    harness: str = "auto"  # auto (run if compiled) | require | skip
    keep_data: bool = False
    jfr: bool = False  # record a JFR profile of the Spark driver JVM into <out>/driver.jfr
    # Rows per append of the many-splits layout (a table of ceil(rows / append_rows) appends).
    append_rows: int = 100_000
    # An existing session to use (the smoke test passes pytest's); it is left running.
    spark: Any = field(default=None, repr=False)


# ---- measurement helpers --------------------------------------------------------------------


def _summary(times: list[float]) -> dict[str, Any]:
    return {
        "seconds": times,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
    }


def _read_status(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(re.sub(r"[^0-9]", "", line))
    except OSError:
        pass
    return -1


class PeakMemory:
    """The driver JVM's peak resident memory (VmHWM, kB) over one workload. Resets the peak
    through /proc/<pid>/clear_refs where allowed; otherwise reports the process-lifetime peak."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def reset(self) -> bool:
        try:
            Path(f"/proc/{self.pid}/clear_refs").write_text("5")
            return True
        except OSError:
            return False

    def peak_kb(self) -> int:
        return _read_status(self.pid, "VmHWM")


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _data_bytes(path: Path) -> dict[str, int]:
    """An IndexTables table's bytes outside its transaction log: in all, in Parquet files and
    in splits (a companion table holds both; a splits table, splits only)."""
    files = [f for f in path.rglob("*") if f.is_file() and LOG_DIR not in f.relative_to(path).parts]
    return {
        "data_bytes": sum(f.stat().st_size for f in files),
        "parquet_bytes": sum(f.stat().st_size for f in files if f.name.endswith(".parquet")),
        "split_bytes": sum(f.stat().st_size for f in files if f.name.endswith(".split")),
    }


def scan_route(description: str | None) -> str:
    """How a companion table's scan read its rows, from its description: `parquet (<why>)` when
    it read the Parquet files with Spark's Parquet reader, `log` when the log answered it,
    `aggregation` when the index answered a pushed aggregation, `index` when it searched (`index,
    on the driver` when the driver searched, with no job)."""
    if not description:
        return "unknown"
    m = re.search(r"Route: parquet \(([^)]*)\)", description)
    if m:
        return f"parquet ({m.group(1)})"
    if "AnsweredFromLog: true" in description:
        return "log"
    if "PushedAggregation" in description:
        return "aggregation"
    if "AnsweredOnDriver: true (" in description:
        return "index, on the driver"
    return "index"


def scan_metrics(df: DataFrame) -> dict[str, Any]:
    """Rows each scan node shipped to Spark (numOutputRows), and the IndexTables scan line."""
    nodes = plan_nodes(df._jdf.queryExecution().executedPlan())
    shipped = []
    description = None
    for n in nodes:
        name = n.getClass().getSimpleName()
        if name in ("BatchScanExec", "FileSourceScanExec", "IndexTablesLocalScanExec"):
            m = n.metrics().get("numOutputRows")
            if m.isDefined():
                shipped.append(int(m.get().value()))
            if name == "BatchScanExec":
                description = str(n.scan().description())
            elif name == "IndexTablesLocalScanExec":  # answered on the driver, with no job
                description = str(n.description())
    return {"scan_rows": sum(shipped) if shipped else None, "scan": description}


def pushed_query(description: str | None) -> str | None:
    """The PushedQuery JSON of the IndexTables scan description (None for match_all)."""
    if not description or "PushedQuery: " not in description:
        return None
    rest = description.split("PushedQuery: ", 1)[1].rsplit(", Splits: ", 1)[0]
    # A search answered on the driver says so (read/DriverSearch) before its splits.
    rest = re.sub(r", AnsweredOnDriver: true \(\d+ rows\)$", "", rest)
    rest = re.sub(r", PushedLimit: \d+$", "", rest)
    return None if rest == "match_all" else rest


def _freeze(row: Any) -> tuple[Any, ...]:
    return tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row)


# ---- workloads --------------------------------------------------------------------------------


@dataclass
class Query:
    name: str
    what: str
    build: Callable[[DataFrame], DataFrame]
    action: str  # collect | count | noop
    ceiling: dict[str, Any]  # the ideal native query (harness spec)
    fields: list[str]  # the stored fields the product fetches for it
    count_only: bool = False
    limit: int | None = None
    same_rows: bool = True  # compare the rows themselves, not only their number
    # A native aggregation answering the same question (harness variant "native_aggregate"):
    # what aggregate pushdown could reach.
    aggregate: dict[str, Any] | None = None
    # The Parquet side, when a user would write the query differently there (indexquery).
    build_parquet: Callable[[DataFrame], DataFrame] | None = None

    def build_for(self, fmt: str) -> Callable[[DataFrame], DataFrame]:
        return self.build_parquet if fmt == "parquet" and self.build_parquet else self.build


def queries(phrase: str, common: str) -> list[Query]:
    msg, lvl, host, lat = F.col("message"), F.col("level"), F.col("host"), F.col("latency_ms")
    all_cols = list(datagen.COLUMNS)
    phrase_tokens = [t.lower() for t in re.findall(r"[A-Za-z0-9]+", phrase)]
    host_pick = datagen.HOSTS[2]

    def text(term: str) -> dict[str, Any]:
        return {"term": ["message", term.lower()]}

    # What indexquery matches, for Parquet: the words as tantivy's default tokenizer cuts
    # (runs of letters and digits) and lower-cases text, adjacent for a phrase.
    def words_rlike(*words: str) -> str:
        sep = "[^\\p{L}\\p{N}]"
        return f"(?iu)(^|{sep})" + f"{sep}+".join(words) + f"({sep}|$)"

    rare_rlike = words_rlike(datagen.RARE_TERM)
    phrase_rlike = words_rlike(*phrase_tokens)
    either_rlike = words_rlike("(?:exception|timeout)")
    boolean_ceiling = {
        "bool": {
            "must": [
                {"bool": {"should": [text("exception"), text("timeout")]}},
                {"term": ["level", "ERROR"]},
                {"bool": {"should": [{"term": ["host", h]} for h in datagen.HOSTS[:3]]}},
            ]
        }
    }

    return [
        Query(
            "rare_term",
            f"message contains '{datagen.RARE_TERM}' (<= 0.01% of rows)",
            lambda d: d.filter(msg.contains(datagen.RARE_TERM)),
            "collect",
            text(datagen.RARE_TERM),
            all_cols,
        ),
        Query(
            "common_term",
            f"message contains '{common}', all columns consumed (noop sink)",
            lambda d: d.filter(msg.contains(common)),
            "noop",
            text(common),
            all_cols,
        ),
        Query(
            "phrase",
            f"message contains '{phrase}'",
            lambda d: d.filter(msg.contains(phrase)),
            "collect",
            {"phrase": ["message", phrase_tokens]},
            all_cols,
        ),
        Query(
            "boolean_mix",
            "(message contains 'exception' OR 'timeout') AND level = 'ERROR' AND host IN (3 hosts)",
            lambda d: d.filter(
                (msg.contains("exception") | msg.contains("timeout"))
                & (lvl == "ERROR")
                & host.isin(*datagen.HOSTS[:3])
            ),
            "collect",
            boolean_ceiling,
            all_cols,
        ),
        # The same three searches as an IndexTables user writes them (indexquery: whole words,
        # answered from the index alone); Parquet runs the matching word regex. `contains` above
        # must also match inside words, which on a text field is a wildcard over every term.
        Query(
            "rare_indexquery",
            f"message indexquery '{datagen.RARE_TERM}' (Parquet: the word, as rlike)",
            lambda d: d.filter(F.expr(f"message indexquery '{datagen.RARE_TERM}'")),
            "collect",
            text(datagen.RARE_TERM),
            all_cols,
            build_parquet=lambda d: d.filter(msg.rlike(rare_rlike)),
        ),
        Query(
            "phrase_indexquery",
            f"message indexquery '\"{phrase}\"' (Parquet: the words in a row, as rlike)",
            lambda d: d.filter(F.expr(f"message indexquery '\"{phrase}\"'")),
            "collect",
            {"phrase": ["message", phrase_tokens]},
            all_cols,
            build_parquet=lambda d: d.filter(msg.rlike(phrase_rlike)),
        ),
        Query(
            "boolean_indexquery",
            "message indexquery 'exception OR timeout' AND level = 'ERROR' AND host IN (3 hosts)",
            lambda d: d.filter(
                F.expr("message indexquery 'exception OR timeout'")
                & (lvl == "ERROR")
                & host.isin(*datagen.HOSTS[:3])
            ),
            "collect",
            boolean_ceiling,
            all_cols,
            build_parquet=lambda d: d.filter(
                msg.rlike(either_rlike) & (lvl == "ERROR") & host.isin(*datagen.HOSTS[:3])
            ),
        ),
        Query(
            "range_equality",
            f"latency_ms >= 100 AND latency_ms < 110 AND host = '{host_pick}'",
            lambda d: d.filter((lat >= 100.0) & (lat < 110.0) & (host == host_pick)),
            "collect",
            {
                "bool": {
                    "must": [
                        {"range": ["latency_ms", "100.0", "110.0", "f64", True, False]},
                        {"term": ["host", host_pick]},
                    ]
                }
            },
            all_cols,
        ),
        Query(
            "count_text",
            f"COUNT(*) WHERE message contains '{common}'",
            lambda d: d.filter(msg.contains(common)).agg(F.count(F.lit(1)).alias("n")),
            "collect",
            text(common),
            [],
            count_only=True,
            aggregate={"kind": "count", "field": "component", "query": text(common)},
        ),
        Query(
            "count_indexquery",
            f"COUNT(*) WHERE message indexquery '{common}' (Parquet: the word, as rlike)",
            lambda d: d.filter(F.expr(f"message indexquery '{common}'")).agg(
                F.count(F.lit(1)).alias("n")
            ),
            "collect",
            text(common),
            [],
            count_only=True,
            aggregate={"kind": "count", "field": "component", "query": text(common)},
            build_parquet=lambda d: d.filter(msg.rlike(words_rlike(common))).agg(
                F.count(F.lit(1)).alias("n")
            ),
        ),
        Query(
            "group_by_level",
            "SELECT level, COUNT(*) GROUP BY level",
            lambda d: d.groupBy("level").agg(F.count(F.lit(1)).alias("n")),
            "collect",
            {"all": True},
            ["level"],
            aggregate={"kind": "terms", "field": "level", "query": {"all": True}},
        ),
        Query(
            "limit_100",
            f"level = 'ERROR' AND host = '{host_pick}' LIMIT 100",
            lambda d: d.filter((lvl == "ERROR") & (host == host_pick)).limit(100),
            "collect",
            {"bool": {"must": [{"term": ["level", "ERROR"]}, {"term": ["host", host_pick]}]}},
            all_cols,
            limit=100,
            same_rows=False,
        ),
        Query(
            "full_scan",
            "ts, level, latency_ms of every row (noop sink)",
            lambda d: d.select("ts", "level", "latency_ms"),
            "noop",
            {"all": True},
            ["ts", "level", "latency_ms"],
        ),
    ]


QUERY_CACHE = "spark.indextables.cache.queryCache.enabled"


def _write_indextables(layout: str) -> Callable[[DataFrame, Path, str], None]:
    def write(d: DataFrame, p: Path, mode: str) -> None:
        d.write.format("indextables").option(LAYOUT, layout).option(TYPEMAP_MESSAGE, "text").mode(
            mode
        ).save(str(p))

    return write


# How each format is written (mode: overwrite or append) and read. "indextables" is the
# `splits` layout (rows in the splits); "companion" the companion layout (each task's rows in a
# Parquet file, beside an index-only split over it).
WRITERS: dict[str, Callable[[DataFrame, Path, str], None]] = {
    "noop": lambda d, p, mode: d.write.format("noop").mode("overwrite").save(),
    "parquet": lambda d, p, mode: d.write.mode(mode).parquet(str(p)),
    "indextables": _write_indextables("splits"),
    "companion": _write_indextables("companion"),
}
READERS: dict[str, Callable[[SparkSession, str], DataFrame]] = {
    "indextables": lambda spark, p: spark.read.format("indextables").load(p),
    "companion": lambda spark, p: spark.read.format("indextables").load(p),
    "parquet": lambda spark, p: spark.read.parquet(p),
}


def _execute(df: DataFrame, action: str) -> list[Any] | None:
    if action == "collect":
        return df.collect()
    if action == "noop":
        df.write.format("noop").mode("overwrite").save()
        return None
    raise ValueError(action)


# ---- the run ----------------------------------------------------------------------------------


_SQL_CONF = {
    # One task per file for both formats: files are never split nor packed together.
    "spark.sql.files.maxPartitionBytes": str(1 << 34),
    "spark.sql.files.openCostInBytes": str(1 << 34),
    "spark.sql.session.timeZone": "UTC",
}


def _spark(cfg: Config) -> SparkSession:
    builder = (
        SparkSession.builder.master(f"local[{cfg.cores}]")
        .appName("indextables-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", cfg.driver_memory)
        .config("spark.sql.shuffle.partitions", str(cfg.cores))
        .config("spark.sql.warehouse.dir", str(cfg.out / "warehouse"))
    )
    if cfg.jfr:
        jfr = cfg.out / "driver.jfr"
        builder = builder.config(
            "spark.driver.extraJavaOptions",
            f"-XX:StartFlightRecording=filename={jfr},settings=profile,dumponexit=true",
        )
    for key, value in _SQL_CONF.items():
        builder = builder.config(key, value)
    spark = indextables.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def _machine() -> dict[str, Any]:
    mem_kb = -1
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(re.sub(r"[^0-9]", "", line))
    return {
        "cores": os.cpu_count(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "loadavg_start": os.getloadavg(),
    }


def harness_classpath(main_class: str = HARNESS_CLASS) -> str | None:
    """The classpath of a raw tantivy4java harness (the bench classes under test-classes, the
    product's JAR, PySpark's jars), or None when `main_class` is not compiled."""
    if not (TEST_CLASSES / (main_class.replace(".", "/") + ".class")).is_file():
        return None
    import pyspark

    spark_jars = Path(pyspark.__file__).parent / "jars"
    return os.pathsep.join([str(spark_jars / "*"), indextables.jar_path(), str(TEST_CLASSES)])


def run_suite(cfg: Config) -> dict[str, Any]:
    cfg.out = Path(cfg.out).resolve()
    cfg.out.mkdir(parents=True, exist_ok=True)
    data = cfg.out / "data"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    if cfg.spark is None:
        return _run(cfg, _spark(cfg), own_session=True)
    # A borrowed session: set what the suite needs, and give its settings back afterwards.
    spark = cfg.spark
    saved = {k: spark.conf.get(k, None) for k in _SQL_CONF}
    try:
        for key, value in _SQL_CONF.items():
            spark.conf.set(key, value)
        return _run(cfg, spark, own_session=False)
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _run(cfg: Config, spark: SparkSession, own_session: bool) -> dict[str, Any]:
    data = cfg.out / "data"
    started = time.time()
    result: dict[str, Any] = {
        "config": {k: str(getattr(cfg, k)) for k in Config.__dataclass_fields__ if k != "spark"}
    }
    result["machine"] = _machine()
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())

    def log(msg: str) -> None:
        print(f"[bench {time.time() - started:7.1f}s] {msg}", flush=True)

    pid = int(jvm(spark).java.lang.ProcessHandle.current().pid())
    mem = PeakMemory(pid)
    result["machine"]["peak_reset"] = mem.reset()

    # ---- data: generated once into a Parquet source, plus JSON lines for the harness -------
    # The source has one file per append of the many-splits layout; the one-write layout reads
    # it as `partitions` tasks (one split per task up to ROWS_PER_SPLIT rows).
    per_round = cfg.cores * ROWS_PER_SPLIT
    partitions = cfg.cores * max(1, math.ceil(cfg.rows / per_round))
    appends = max(partitions, math.ceil(cfg.rows / cfg.append_rows))
    log(f"generating {cfg.rows} rows in {appends} files ({partitions} write tasks)")
    t0 = time.perf_counter()
    gen_df, source_desc = datagen.generate(
        spark, cfg.rows, appends, cfg.seed, cfg.loghub_dir if cfg.loghub_dir else None
    )
    source_path = data / "source"
    gen_df.write.mode("overwrite").parquet(str(source_path))
    source_files = sorted(source_path.glob("*.parquet"))
    assert len(source_files) == appends, (len(source_files), appends)

    def source() -> DataFrame:
        return spark.read.parquet(str(source_path)).coalesce(partitions)

    rows_json = data / "rows_json"
    source().select(
        F.unix_micros("ts").alias("ts"), "level", "component", "host", "latency_ms", "message"
    ).write.mode("overwrite").json(str(rows_json))
    json_bytes = sum(p.stat().st_size for p in rows_json.glob("*.json"))
    assert source().rdd.getNumPartitions() == partitions
    result["data"] = {
        "rows": cfg.rows,
        "partitions": partitions,
        "appends": appends,
        "templates": source_desc,
        "json_bytes": json_bytes,
        "source_parquet_bytes": _dir_bytes(source_path),
        "generate_s": time.perf_counter() - t0,
    }
    log(f"data ready: {json_bytes / 1e6:.1f} MB as JSON lines ({source_desc})")
    phrase = "session closed for user" if "loghub" in source_desc else "Connection reset by peer"
    common = "block"
    result["data"]["phrase"] = phrase
    result["data"]["common_term"] = common

    # ---- ingest: formats interleaved round by round ------------------------------------------
    tables = data / "tables"
    ingest: dict[str, dict[str, Any]] = {k: {"times": [], "peak_kb": []} for k in WRITERS}
    last: dict[str, Path] = {}
    for rnd in range(cfg.warmup + cfg.runs):
        for name, write in WRITERS.items():
            path = tables / f"{name}-{rnd}"
            mem.reset()
            t = time.perf_counter()
            write(source(), path, "overwrite")
            secs = time.perf_counter() - t
            if rnd >= cfg.warmup:
                ingest[name]["times"].append(secs)
                ingest[name]["peak_kb"].append(mem.peak_kb())
            if name in last:
                shutil.rmtree(last[name], ignore_errors=True)
            last[name] = path
            log(f"ingest round {rnd} {name}: {secs:.2f}s")
    result["ingest"] = {}
    for name, v in ingest.items():
        s = _summary(v["times"])
        s["peak_rss_mb"] = max(v["peak_kb"]) / 1024
        s["rows_per_s"] = cfg.rows / s["median_s"]
        s["bytes_per_s"] = json_bytes / s["median_s"]
        if name != "noop":
            s["table_bytes"] = _dir_bytes(last[name])
        if name in ("indextables", "companion"):
            s.update(_data_bytes(last[name]))
        result["ingest"][name] = s
    _save_partial(cfg, result)

    # ---- the many-splits layout: one append per source file, for every format -------------
    # (the companion table is queried on this layout only: each of its appends is one Parquet
    # file and one split, as a companion table grows)
    layouts: dict[str, dict[str, str]] = {
        "one_write": {"indextables": str(last["indextables"]), "parquet": str(last["parquet"])}
    }
    shutil.rmtree(last["companion"], ignore_errors=True)
    appended: dict[str, float] = {}
    for name in ("indextables", "parquet", "companion"):
        path = tables / f"{name}-appends"
        t = time.perf_counter()
        for f in source_files:
            WRITERS[name](spark.read.parquet(str(f)), path, "append")
        appended[name] = time.perf_counter() - t
    layouts["appends"] = {
        n: str(tables / f"{n}-appends") for n in ("indextables", "parquet", "companion")
    }
    result["appends"] = {
        "count": appends,
        "rows_each": math.ceil(cfg.rows / appends),
        "seconds": appended,
        "table_bytes": {n: _dir_bytes(Path(p)) for n, p in layouts["appends"].items()},
        "data_bytes": {
            n: _data_bytes(Path(layouts["appends"][n])) for n in ("indextables", "companion")
        },
    }
    log(f"appended {appends} times: {appended}")

    # ---- fixed overhead on a 1-row table -------------------------------------------------
    one = spark.read.parquet(str(source_path)).limit(1).coalesce(1)
    one_it, one_pq = data / "one-it", data / "one-pq"
    WRITERS["indextables"](one, one_it, "overwrite")
    one.write.mode("overwrite").parquet(str(one_pq))
    overhead: dict[str, list[float]] = {"indextables": [], "parquet": []}
    spark.conf.set(QUERY_CACHE, "false")
    for rnd in range(cfg.warmup + cfg.runs):
        for name, one_path in (("indextables", one_it), ("parquet", one_pq)):
            t = time.perf_counter()
            df = READERS[name](spark, str(one_path))
            df.filter(F.col("message").contains("x") & (F.col("level") == "ERROR")).collect()
            if rnd >= cfg.warmup:
                overhead[name].append(time.perf_counter() - t)
    result["planning_overhead"] = {k: _summary(v) for k, v in overhead.items()}
    fixed = result["planning_overhead"]["indextables"]["median_s"]
    log(f"fixed overhead (1-row table): {fixed * 1000:.1f} ms")

    # ---- queries: on each layout, IndexTables (cold and warm) and Parquet side by side -----
    qs = queries(phrase, common)
    verified = True
    for layout, paths in layouts.items():
        qres, ok = _run_queries(cfg, spark, qs, paths, mem, log, layout, result)
        result[LAYOUT_KEYS[layout]] = qres
        verified &= ok
    spark.conf.unset(QUERY_CACHE)
    result["verified"] = verified
    result["driver_vm_hwm_mb_lifetime"] = _read_status(pid, "VmHWM") / 1024
    if own_session:
        spark.stop()

    # ---- ceilings: raw tantivy4java without Spark -------------------------------------------
    result["ceiling"] = _run_harness(
        cfg, rows_json, qs, result["queries"], math.ceil(cfg.rows / appends), log
    )
    result["python_max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["machine"]["loadavg_end"] = os.getloadavg()
    result["wall_s"] = time.time() - started
    _ratios(result, fixed)

    (cfg.out / "results.json").write_text(json.dumps(result, indent=2, default=str))
    (cfg.out / "results.partial.json").unlink(missing_ok=True)
    (cfg.out / "results.md").write_text(markdown(result))
    if not cfg.keep_data:
        shutil.rmtree(data, ignore_errors=True)
    log(f"wrote {cfg.out / 'results.json'} and {cfg.out / 'results.md'}")
    return result


# The ways a query runs: IndexTables with tantivy's leaf-search cache off (every run
# searches: the headline figure), IndexTables with it on (a user repeating a query), Parquet,
# and, on a layout that has a companion table, that table with the cache off.
VARIANTS = ("indextables", "indextables_warm", "parquet", "companion")
LAYOUT_KEYS = {"one_write": "queries", "appends": "queries_appends"}


def _run_queries(
    cfg: Config,
    spark: SparkSession,
    qs: list[Query],
    paths: dict[str, str],
    mem: PeakMemory,
    log: Callable[[str], None],
    layout: str,
    result: dict[str, Any],
) -> tuple[dict[str, dict[str, Any]], bool]:
    variants = [v for v in VARIANTS if v != "companion" or "companion" in paths]
    qres: dict[str, dict[str, Any]] = {
        q.name: {"what": q.what, **{v: {"times": [], "peak_kb": []} for v in variants}} for q in qs
    }
    for rnd in range(cfg.warmup + cfg.runs):
        for q in qs:
            for variant in variants:
                fmt = "indextables" if variant == "indextables_warm" else variant
                spark.conf.set(QUERY_CACHE, "true" if variant == "indextables_warm" else "false")
                mem.reset()
                t = time.perf_counter()
                df = q.build_for(fmt)(READERS[fmt](spark, paths[fmt]))
                out = _execute(df, q.action)
                secs = time.perf_counter() - t
                r = qres[q.name][variant]
                r["last"] = secs
                if rnd >= cfg.warmup:
                    r["times"].append(secs)
                    r["peak_kb"].append(mem.peak_kb())
                if rnd == 0 and variant != "indextables_warm":
                    # A noop write runs its own plan, so df's holds no metrics: scan rows are
                    # read for the collected queries (COUNT and GROUP BY among them).
                    r.update(scan_metrics(df))
                    if q.action != "collect":
                        r["scan_rows"] = None
                    if out is not None:
                        r["rows"] = [_freeze(x) for x in out]
        times = ", ".join(
            f"{q.name} " + "/".join(f"{qres[q.name][v]['last']:.2f}" for v in variants) for q in qs
        )
        log(f"{layout} query round {rnd} ({'/'.join(variants)} s): {times}")
        _save_partial(cfg, result, {f"{layout}_so_far": qres})

    verified = True
    for q in qs:
        r = qres[q.name]
        it, pq = r["indextables"], r["parquet"]
        # Each IndexTables table's answer is checked against Parquet's.
        checked = [v for v in ("indextables", "companion") if v in variants]
        if q.action == "collect":
            b = pq.pop("rows")
            pq["result_rows"] = b[0][0] if q.count_only else len(b)
            for v in checked:
                a = r[v].pop("rows")
                r[v]["result_rows"] = a[0][0] if q.count_only else len(a)
                r[v]["same_answer"] = len(a) == len(b) and (
                    not q.same_rows or Counter(a) == Counter(b)
                )
        else:
            pq["result_rows"] = q.build_for("parquet")(
                READERS["parquet"](spark, paths["parquet"])
            ).count()
            for v in checked:
                r[v]["result_rows"] = q.build_for(v)(READERS[v](spark, paths[v])).count()
                r[v]["same_answer"] = r[v]["result_rows"] == pq["result_rows"]
        same = it["same_answer"]
        r["verified"] = same
        r["pushed_query"] = pushed_query(it.get("scan"))
        if "companion" in variants:
            co = r["companion"]
            co["route"] = scan_route(co.get("scan"))
            r["companion_verified"] = co["same_answer"]
            r["companion_pushed_query"] = pushed_query(co.get("scan"))
            same = same and co["same_answer"]
        verified &= same
        for variant in variants:
            s = r[variant]
            s.pop("last", None)
            s.update(_summary(s.pop("times")))
            s["peak_rss_mb"] = max(s.pop("peak_kb")) / 1024
            s["rows_per_s"] = cfg.rows / s["median_s"]
        aggregate = q.name in ("limit_100", "group_by_level")
        r["selectivity"] = None if aggregate else pq["result_rows"] / cfg.rows
        r["ratio_parquet_over_indextables"] = pq["median_s"] / it["median_s"]
        r["ratio_parquet_over_indextables_warm"] = (
            pq["median_s"] / r["indextables_warm"]["median_s"]
        )
        companion = ""
        if "companion" in variants:
            co = r["companion"]
            r["ratio_parquet_over_companion"] = pq["median_s"] / co["median_s"]
            r["ratio_companion_over_indextables"] = co["median_s"] / it["median_s"]
            companion = (
                f" companion {co['median_s']:.3f}s ({co['route']}, rows {co['result_rows']}"
                f"{'' if co['same_answer'] else ' MISMATCH'})"
            )
        log(
            f"{layout} {q.name}: IT {it['median_s']:.3f}s "
            f"(warm {r['indextables_warm']['median_s']:.3f}s) PQ {pq['median_s']:.3f}s "
            f"rows {it['result_rows']}/{pq['result_rows']} "
            f"{'ok' if it['same_answer'] else 'MISMATCH'}{companion}"
        )
    return qres, verified


def _save_partial(cfg: Config, result: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
    """What a long run has measured so far (results.partial.json), in case it is cut short."""
    data = dict(result, **(extra or {}))
    (cfg.out / "results.partial.json").write_text(json.dumps(data, indent=2, default=str))


def _run_harness(
    cfg: Config,
    rows_json: Path,
    qs: list[Query],
    qres: dict[str, dict[str, Any]],
    append_rows: int,
    log: Callable[[str], None],
) -> dict[str, Any] | None:
    if cfg.harness == "skip":
        return None
    cp = harness_classpath()
    if cp is None:
        msg = (
            f"{HARNESS_CLASS} is not compiled under {TEST_CLASSES} "
            "(run build/sbt spark/Test/compile)"
        )
        if cfg.harness == "require":
            raise RuntimeError(msg)
        log("ceilings skipped: " + msg)
        return {"skipped": msg}
    specs = []
    for q in qs:
        variants = {"ideal": q.ceiling}
        ast = qres[q.name].get("pushed_query")
        if ast:
            variants["product_query"] = {"ast": ast}
        if q.aggregate:
            variants["native_aggregate"] = {"aggregate": q.aggregate}
        specs.append(
            {
                "name": q.name,
                "fields": q.fields,
                "count_only": q.count_only,
                "limit": q.limit,
                "variants": variants,
            }
        )
    qfile = cfg.out / "data" / "harness-queries.json"
    qfile.write_text(json.dumps(specs, indent=2))
    out = cfg.out / "data" / "harness-result.json"
    cmd = [
        "java", "-Xmx4g",
        *(
            [f"-XX:StartFlightRecording=filename={cfg.out / 'harness.jfr'},settings=profile"]
            if cfg.jfr
            else []
        ),
        "-cp", cp, HARNESS_CLASS,
        "--input", str(rows_json), "--queries", str(qfile),
        "--work", str(cfg.out / "data" / "harness"),
        "--out", str(out), "--threads", str(cfg.cores), "--runs", str(cfg.runs),
        "--warmup", str(cfg.warmup), "--max-rows-per-split", str(ROWS_PER_SPLIT),
        "--append-split-rows", str(append_rows),
    ]  # fmt: skip
    log("running the tantivy4java ceiling harness")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"ceiling harness failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    res: dict[str, Any] = json.loads(out.read_text())
    res["ingest"]["rows_per_s"] = res["ingest"]["rows"] / res["ingest"]["median_s"]
    return res


def _ratios(result: dict[str, Any], fixed: float) -> None:
    ing = result["ingest"]
    ceiling = result.get("ceiling") or {}
    it = ing["indextables"]
    it["ratio_vs_parquet_time"] = it["median_s"] / ing["parquet"]["median_s"]
    it["ratio_vs_noop_time"] = it["median_s"] / ing["noop"]["median_s"]
    co = ing["companion"]
    co["ratio_vs_parquet_time"] = co["median_s"] / ing["parquet"]["median_s"]
    co["ratio_vs_noop_time"] = co["median_s"] / ing["noop"]["median_s"]
    co["ratio_vs_splits_time"] = co["median_s"] / it["median_s"]
    # Table bytes outside the log: the companion's Parquet files and splits, against the
    # Parquet table and against the splits table.
    co["bytes_vs_parquet"] = co["data_bytes"] / ing["parquet"]["table_bytes"]
    co["bytes_vs_splits"] = co["data_bytes"] / it["data_bytes"]
    it["bytes_vs_parquet"] = it["data_bytes"] / ing["parquet"]["table_bytes"]
    ing["parquet"]["ratio_vs_noop_time"] = ing["parquet"]["median_s"] / ing["noop"]["median_s"]
    if "ingest" in ceiling:
        c = ceiling["ingest"]
        it["ceiling_median_s"] = c["median_s"]
        it["rate_vs_ceiling"] = c["median_s"] / it["median_s"]
        # Excluding the cost of producing the rows (the noop write), which the ceiling skips.
        net = it["median_s"] - ing["noop"]["median_s"]
        it["rate_vs_ceiling_net_of_noop"] = c["median_s"] / net if net > 0 else None
    for key in LAYOUT_KEYS.values():
        for name, q in result[key].items():
            cq = (ceiling.get(key) or {}).get(name)
            if not cq:
                continue
            q["ceiling"] = cq
            t = q["indextables"]["median_s"]
            ideal = cq["ideal"]["median_s"]
            q["ratio_vs_ceiling"] = t / ideal
            q["goal_budget_s"] = 1.5 * ideal + fixed
            q["goal_met"] = t <= q["goal_budget_s"]


# ---- report -----------------------------------------------------------------------------------


def _fmt_t(s: dict[str, Any]) -> str:
    return f"{s['median_s']:.3f} ({s['min_s']:.3f}–{s['max_s']:.3f})"


def _rate(x: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.2f}{unit}"
    return f"{x:.0f}"


def _n(x: Any) -> str:
    return "–" if x is None else str(x)


def _splits_tasks(q: dict[str, Any]) -> str:
    m = re.search(r"Splits: (\d+)/\d+, Tasks: (\d+)", q["indextables"].get("scan") or "")
    return f"{m.group(1)} splits read in {m.group(2)} tasks" if m else "splits: unknown"


def _ingest_lines(r: dict[str, Any]) -> list[str]:
    d, ing = r["data"], r["ingest"]
    lines = [
        "## Ingest",
        "",
        "| Format | Time s | Rows/s | Bytes/s | Peak RSS MB | Table MB "
        "| × Parquet time | × noop time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    labels = {"indextables": "indextables (splits)", "companion": "indextables (companion)"}
    for name in ("noop", "parquet", "indextables", "companion"):
        s = ing[name]
        lines.append(
            f"| {labels.get(name, name)} | {_fmt_t(s)} | {_rate(s['rows_per_s'])} | "
            f"{_rate(s['bytes_per_s'])}B | "
            f"{s['peak_rss_mb']:.0f} | {s.get('table_bytes', 0) / 1e6:.1f} | "
            f"{s['median_s'] / ing['parquet']['median_s']:.2f} | "
            f"{s['median_s'] / ing['noop']['median_s']:.2f} |"
        )
    c = r.get("ceiling") or {}
    it = ing["indextables"]
    if "ingest" in c:
        ci = c["ingest"]
        lines.append(
            f"| tantivy4java ceiling (batch documents, {c['threads']} threads, native time only) | "
            f"{_fmt_t(ci)} | {_rate(ci['rows_per_s'])} | "
            f"{_rate(d['json_bytes'] / ci['median_s'])}B | "
            f"{c['vm_hwm_after_ingest_kb'] / 1024:.0f} (harness) | {ci['split_bytes'] / 1e6:.1f} | "
            f"{ci['median_s'] / ing['parquet']['median_s']:.2f} | "
            f"{ci['median_s'] / ing['noop']['median_s']:.2f} |"
        )
        net = it.get("rate_vs_ceiling_net_of_noop")
        net_s = f"; {net:.2f} × net of the noop cost of producing the rows" if net else ""
        lines += [
            "",
            f"IndexTables ingest rate = **{it['rate_vs_ceiling']:.2f} × the raw tantivy4java "
            f"rate** (goal ≥ 0.9{net_s}) and **{it['ratio_vs_parquet_time']:.2f} × the Parquet "
            "write time** (goal ≤ 3).",
        ]
    co = ing["companion"]
    lines += [
        "",
        f"Companion layout: write **{co['ratio_vs_parquet_time']:.2f} × Parquet's time** "
        f"({co['ratio_vs_splits_time']:.2f} × the splits layout's); table (outside the log) "
        f"{co['data_bytes'] / 1e6:.1f} MB = {co['parquet_bytes'] / 1e6:.1f} MB of Parquet + "
        f"{co['split_bytes'] / 1e6:.1f} MB of splits: **{co['bytes_vs_parquet']:.2f} × "
        f"Parquet's bytes**, {co['bytes_vs_splits']:.2f} × the splits table's "
        f"({it['data_bytes'] / 1e6:.1f} MB, {it['bytes_vs_parquet']:.2f} × Parquet's).",
    ]
    a = r["appends"]
    lines += [
        "",
        f"The many-splits layout: {a['count']} appends of {a['rows_each']:,} rows each took "
        f"{a['seconds']['indextables']:.1f} s as IndexTables (splits), "
        f"{a['seconds']['companion']:.1f} s as IndexTables (companion) and "
        f"{a['seconds']['parquet']:.1f} s as Parquet "
        f"({a['table_bytes']['indextables'] / 1e6:.1f} MB, "
        f"{a['table_bytes']['companion'] / 1e6:.1f} MB and "
        f"{a['table_bytes']['parquet'] / 1e6:.1f} MB).",
    ]
    return lines


def _companion_lines(r: dict[str, Any], key: str, title: str) -> list[str]:
    """The companion table's queries (cold), against Parquet and the splits table (cold)."""
    qs = r[key]
    lines = [
        f"## Queries: companion layout, {title}",
        "",
        "Each query on the companion table with tantivy's leaf-search cache off, beside the same "
        "query on Parquet and on the splits table (cache off) in the same rounds. Route: how its "
        "scan read the rows (`parquet`: Spark's Parquet reader over the table's Parquet files, "
        "no search; `index`: a search, rows fetched from Parquet; `aggregation`: the index "
        "answered a pushed aggregation).",
        "",
        "| Query | Companion s | IT (splits) cold s | Parquet s | PQ ÷ companion "
        "| companion ÷ splits | Route | Result rows | Rows shipped by scan | Same answer |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, q in qs.items():
        co = q.get("companion")
        if not co:
            continue
        lines.append(
            f"| {name} | {_fmt_t(co)} | {_fmt_t(q['indextables'])} | {_fmt_t(q['parquet'])} | "
            f"{q['ratio_parquet_over_companion']:.2f} | "
            f"{q['ratio_companion_over_indextables']:.2f} | {co['route']} | "
            f"{co['result_rows']} | {_n(co.get('scan_rows'))} | "
            f"{'yes' if co['same_answer'] else '**NO**'} |"
        )
    return lines


def _query_lines(r: dict[str, Any], key: str, title: str) -> list[str]:
    qs = r[key]
    lines = [
        f"## Queries: {title} ({_splits_tasks(qs['group_by_level'])})",
        "",
        (
            "| Query | IT cold s | IT warm s | Parquet s | PQ ÷ IT cold | PQ ÷ IT warm "
            "| Ceiling s (ideal query) | Ceiling s (product's query) | Ceiling hits | IT ÷ ceiling "
            "| Goal: IT ≤ 1.5×ceiling + overhead | Result rows | Rows shipped by scan IT / PQ "
            "| Same answer |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, q in qs.items():
        it, warm, pq = q["indextables"], q["indextables_warm"], q["parquet"]
        cq = q.get("ceiling") or {}
        ideal = _fmt_t(cq["ideal"]) if "ideal" in cq else "–"
        prod = (
            _fmt_t(cq["product_query"]) if "product_query" in cq else ("(match_all)" if cq else "–")
        )
        goal = (
            f"{'yes' if q['goal_met'] else 'no'} (budget {q['goal_budget_s']:.3f})"
            if "goal_met" in q
            else "–"
        )
        ratio_c = f"{q['ratio_vs_ceiling']:.1f}" if "ratio_vs_ceiling" in q else "–"
        lines.append(
            f"| {name} | {_fmt_t(it)} | {_fmt_t(warm)} | {_fmt_t(pq)} | "
            f"{q['ratio_parquet_over_indextables']:.1f} | "
            f"{q['ratio_parquet_over_indextables_warm']:.1f} | "
            f"{ideal} | {prod} | {cq.get('ideal', {}).get('hits', '–')} | {ratio_c} | {goal} | "
            f"{it['result_rows']} | {_n(it.get('scan_rows'))} / {_n(pq.get('scan_rows'))} | "
            f"{'yes' if q['verified'] else '**NO**'} |"
        )
    return lines


def _goal_lines(r: dict[str, Any]) -> list[str]:
    po = r["planning_overhead"]
    one = po["indextables"]["median_s"] / po["parquet"]["median_s"]
    lines = [
        "## Goals",
        "",
        f"- 1-row query (filter + collect, cache off): IndexTables {_fmt_t(po['indextables'])} s, "
        f"Parquet {_fmt_t(po['parquet'])} s: **{one:.2f} ×** Parquet (goal ≤ 1.5).",
    ]
    ing = r["ingest"]["indextables"]
    if "rate_vs_ceiling" in ing:
        lines.append(
            f"- ingest: {ing['ratio_vs_parquet_time']:.2f} × Parquet's time (goal ≤ 3), "
            f"{ing['rate_vs_ceiling']:.2f} × the raw tantivy4java rate (goal ≥ 0.9)."
        )
    for key, title in (("queries", "one write"), ("queries_appends", "appends")):
        qs = r[key]
        for name in ("rare_term", "phrase", "boolean_mix"):
            for form in (name, name.split("_")[0] + "_indexquery"):
                q = qs[form]
                lines.append(
                    f"- {title}, selective `{form}`: **{q['ratio_parquet_over_indextables']:.1f} "
                    f"×** faster than Parquet with every query searched anew "
                    f"({q['ratio_parquet_over_indextables_warm']:.1f} × with tantivy's cache) "
                    "(goal ≥ 100)"
                )
        fs = qs["full_scan"]
        lines.append(
            f"- {title}, full scan of three columns: "
            f"**{1 / fs['ratio_parquet_over_indextables']:.1f} ×** Parquet's time (goal ≤ 3)"
        )
        met = [n for n, q in qs.items() if q.get("goal_met")]
        judged = [n for n, q in qs.items() if "goal_met" in q]
        if judged:
            lines.append(
                f"- {title}, within 1.5 × the ideal raw query + the 1-row overhead: "
                f"{len(met)} of {len(judged)} queries ({', '.join(met) or 'none'})"
            )
    co = r["ingest"]["companion"]
    lines.append(
        f"- companion layout: ingest {co['ratio_vs_parquet_time']:.2f} × Parquet's time, "
        f"table {co['bytes_vs_parquet']:.2f} × Parquet's bytes "
        f"({co['bytes_vs_splits']:.2f} × the splits table's)."
    )
    qa = r["queries_appends"]
    for name in ("full_scan", "group_by_level", "rare_indexquery", "phrase_indexquery"):
        q = qa[name]
        if "companion" in q:
            lines.append(
                f"- appends, companion `{name}` ({q['companion']['route']}): "
                f"**{1 / q['ratio_parquet_over_companion']:.2f} ×** Parquet's time, "
                f"{q['ratio_companion_over_indextables']:.2f} × the splits table's"
            )
    for name in ("count_text", "count_indexquery", "group_by_level"):
        q = r["queries"][name]
        agg = (q.get("ceiling") or {}).get("native_aggregate")
        agg_s = (
            f"; a native tantivy4java aggregation answers it in {_fmt_t(agg)} s "
            f"(vs {q['indextables']['median_s']:.3f} s now)"
            if agg
            else ""
        )
        lines.append(
            f"- `{name}` ships {_n(q['indextables'].get('scan_rows'))} rows "
            "from the IndexTables scan "
            f"to Spark for {_n(q['indextables'].get('result_rows'))} result rows "
            f"(Parquet: {_n(q['parquet'].get('scan_rows'))}){agg_s}"
        )
    return lines


def markdown(r: dict[str, Any]) -> str:
    m, d = r["machine"], r["data"]
    c = r.get("ceiling") or {}
    lines = [
        f"# IndexTables benchmark: {d['rows']:,} rows",
        "",
        (
            f"Run {r.get('date', '?')} on {m['cores']} cores, {m['memory_gib']} GiB; load average "
            f"at start {m['loadavg_start'][0]:.2f}, at end {m['loadavg_end'][0]:.2f}. "
            f"Data: {d['templates']}; "
            f"{d['json_bytes'] / 1e6:.1f} MB as JSON lines. Times in seconds: median (min–max) of "
            f"{r['config']['runs']} runs after {r['config']['warmup']} warm-up, every format "
            'measured side by side in each round. "IT cold" runs with tantivy\'s leaf-search '
            'cache off, so every run searches as a new query would; "IT warm" with it on, as '
            "when a user repeats a query. The raw tantivy4java ceilings search with the cache "
            "off. Peak RSS is the driver JVM's VmHWM (Spark runs in local mode)."
        ),
        "",
        *_goal_lines(r),
        "",
        *_ingest_lines(r),
        "",
        *_query_lines(r, "queries", f"one write of {d['partitions']} tasks"),
        "",
        *_query_lines(
            r,
            "queries_appends",
            f"{r['appends']['count']} appends of {r['appends']['rows_each']:,} rows",
        ),
        "",
        *_companion_lines(
            r,
            "queries_appends",
            f"{r['appends']['count']} appends of {r['appends']['rows_each']:,} rows",
        ),
        "",
        "Queries (the same DataFrame expression on both formats) and what IndexTables pushed:",
        "",
    ]
    for name, q in r["queries"].items():
        sel = q.get("selectivity")
        sel_s = f", selectivity {sel * 100:.4f}%" if sel is not None else ""
        lines.append(
            f"- `{name}`: {q['what']}{sel_s}; "
            f"pushed query: `{q.get('pushed_query') or 'match_all'}`"
        )
    lines += [
        "",
        (
            f"Harness peak RSS: {c.get('vm_hwm_kb', 0) / 1024:.0f} MB. "
            f"Whole run: {r['wall_s']:.0f} s."
        ),
        "",
    ]
    return "\n".join(lines)
