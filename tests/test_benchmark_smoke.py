"""Smoke run of the benchmark suite (tests/benchmarks): a tiny N and one run, so the suite, its
Parquet cross-checks, its report and the raw tantivy4java ceiling harness cannot rot.

The harness runs when its class is compiled (build/test.sh compiles it with the JVM suites
before pytest runs); otherwise that part is skipped and reported as such. The smoke runs of the
other benchmark scripts, each in a process of its own, live in tests/benchmarks
(test_scripts_smoke.py, test_log_scale_smoke.py) and run with `build/test.sh --benchmarks`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession

sys.path.insert(0, str(Path(__file__).resolve().parent / "benchmarks"))

from suite import Config, run_suite


def test_benchmark_smoke(spark: SparkSession, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = run_suite(Config(rows=3000, runs=1, warmup=0, out=out, spark=spark, append_rows=1000))

    assert result["verified"], "IndexTables and Parquet disagree on a benchmark query"
    assert set(result["ingest"]) == {"noop", "parquet", "indextables", "companion"}
    expected = {
        "rare_term", "common_term", "phrase", "boolean_mix", "rare_indexquery",
        "phrase_indexquery", "boolean_indexquery", "range_equality", "count_text",
        "count_indexquery", "group_by_level", "limit_100", "full_scan",
    }  # fmt: skip
    assert set(result["queries"]) == expected
    assert set(result["queries_appends"]) == expected
    # The many-splits layout: one split per append, each query on it checked against Parquet.
    assert result["appends"]["count"] == 3
    appended = result["queries_appends"]["group_by_level"]["indextables"]["scan"]
    assert "Splits: 3/3" in appended, appended
    for layout in ("queries", "queries_appends"):
        for name, q in result[layout].items():
            assert q["verified"], (layout, name)
            assert q["indextables_warm"]["median_s"] > 0, (layout, name)
    # The companion layout: its write beside the others, its bytes (Parquet files + splits)
    # against Parquet's and the splits table's, and every query on its table of appends,
    # checked against Parquet, with the route its scan took.
    co = result["ingest"]["companion"]
    assert co["parquet_bytes"] > 0 and co["split_bytes"] > 0
    assert co["data_bytes"] == co["parquet_bytes"] + co["split_bytes"]
    for key in ("ratio_vs_parquet_time", "bytes_vs_parquet", "bytes_vs_splits"):
        assert co[key] > 0, key
    assert result["appends"]["data_bytes"]["companion"]["parquet_bytes"] > 0
    for name, q in result["queries_appends"].items():
        assert q["companion_verified"], name
        assert q["companion"]["median_s"] > 0, name
        assert q["ratio_parquet_over_companion"] > 0 and q["ratio_companion_over_indextables"] > 0
        assert "Splits: 3/3" in q["companion"]["scan"], (name, q["companion"]["scan"])
    routes = {n: q["companion"]["route"] for n, q in result["queries_appends"].items()}
    assert routes["full_scan"] == "parquet (no filter for the index)", routes
    assert routes["group_by_level"] == "aggregation", routes
    for name in ("rare_indexquery", "phrase_indexquery", "boolean_indexquery", "range_equality"):
        # Answered from the index, by tasks or (a small answer) on the driver.
        assert routes[name] in ("index", "index, on the driver"), routes
        assert result["queries_appends"][name]["companion_pushed_query"], name
    assert all("companion" not in q for q in result["queries"].values())
    for name in ("count_text", "count_indexquery", "group_by_level"):
        assert result["queries"][name]["indextables"]["scan_rows"] is not None, name
    assert result["queries"]["count_text"]["indextables"]["result_rows"] > 0
    assert result["queries"]["count_indexquery"]["indextables"]["result_rows"] > 0
    # The indexquery forms of the selective searches are answered from the index (term and
    # phrase queries, no wildcard); at this size only the phrase is sure to match rows.
    assert result["queries"]["phrase_indexquery"]["indextables"]["result_rows"] > 0
    for name in ("rare_indexquery", "phrase_indexquery", "boolean_indexquery"):
        q = result["queries"][name]["indextables"]
        assert "PushedQuery" in q["scan"] and "wildcard" not in q["scan"], q["scan"]
    # Aggregate pushdown: one partial row per split instead of every matching row.
    for name in ("count_indexquery", "group_by_level"):
        q = result["queries"][name]["indextables"]
        assert "PushedAggregation: [COUNT(*)]" in q["scan"], q["scan"]
        n_splits = int(q["scan"].split("Splits: ")[1].split("/")[0])
        assert q["scan_rows"] <= n_splits * 5, (name, q["scan_rows"])
    ceiling = result["ceiling"]
    if "skipped" not in ceiling:
        assert ceiling["ingest"]["rows"] == 3000
        assert set(ceiling["queries"]) == expected
        assert set(ceiling["queries_appends"]) == expected
        assert ceiling["append_splits"] >= 3
    saved = json.loads((out / "results.json").read_text())
    assert saved["data"]["rows"] == 3000
    md = (out / "results.md").read_text()
    assert "## Ingest" in md and "## Queries: one write" in md and "appends of 1,000 rows" in md
    assert "| indextables (companion) |" in md and "## Queries: companion layout" in md
    assert not (out / "data").exists()
    assert not (out / "results.partial.json").exists()
    # The session is pytest's: the suite must leave it running.
    assert spark.range(3).count() == 3
