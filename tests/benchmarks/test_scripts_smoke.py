"""Smoke runs of the benchmark scripts of tests/benchmarks beside the main suite (suite.py, whose
smoke run is tests/test_benchmark_smoke.py, in the normal suite): each at a tiny size, in a
process of its own (each script owns its session), so that the scripts, their cross-checks and
their reports cannot rot. Figures at these sizes mean nothing.

They start a JVM each and take minutes together, so they live with the benchmarks:
`bash build/test.sh --benchmarks` runs them (build/test.sh leaves tests/benchmarks out
otherwise), as does `.venv/bin/python -m pytest tests/benchmarks`. Run them before quoting
figures from a script. The harness parts run when their classes are compiled
(build/sbt "bench/Test/compile"); otherwise those parts are skipped and reported as such.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import harness_classpath


def _run_script(name: str, args: list[str], out: Path) -> None:
    """tests/benchmarks/<name> with `args`, in its own process (each script owns its session),
    writing to `out`; its output is shown when it fails."""
    import subprocess

    script = Path(__file__).resolve().parent / name
    done = subprocess.run(
        [sys.executable, str(script), *args, "--driver-memory", "1g", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_optimized_writes_benchmark_smoke(tmp_path: Path) -> None:
    """tests/benchmarks/optimized_writes.py at a tiny size, in its own process (it owns its
    session): both tables give the same answers, and the optimized one has fewer splits."""
    out = tmp_path / "optimized"
    _run_script(
        "optimized_writes.py",
        ["--rows", "20000", "--partitions", "20", "--target", "1M", "--runs", "1", "--warmup", "1"],
        out,
    )
    result = json.loads((out / "optimized-writes.json").read_text())
    assert result["plain"]["splits"] == 20
    assert result["optimized"]["splits"] < 20
    assert result["count_star_answer"] == 20000
    assert (out / "optimized-writes.md").read_text().startswith("# Optimized writes")


def test_object_store_benchmark_smoke(tmp_path: Path) -> None:
    """The object-store mode (tests/benchmarks/object_store.py) end to end on a tiny table, in a
    process of its own (it starts its own S3 server and session): every query runs, counts
    what it fetched, and the selective searches fetch a small part of the table."""
    out = tmp_path / "bench-s3"
    _run_script("object_store.py", ["--rows", "6000", "--append-rows", "2000", "--runs", "1"], out)
    result = json.loads((out / "results.json").read_text())
    assert result["splits"] == 3
    queries = result["queries"]
    assert "rare_indexquery" in queries and "full_scan" in queries
    for name, q in queries.items():
        assert q["median"]["cold_requests"] > 0, name
    assert queries["rare_indexquery"]["median"]["cold_fraction_of_table"] < 0.2


def test_merge_splits_benchmark_smoke(tmp_path: Path) -> None:
    """tests/benchmarks/merge_splits.py at a tiny size, in its own process (it owns its
    session): the merge leaves one split, and every query answers as before it."""
    out = tmp_path / "merge"
    _run_script(
        "merge_splits.py", ["--appends", "6", "--rows-per-append", "500", "--runs", "2"], out
    )
    result = json.loads((out / "merge-splits.json").read_text())
    assert (result["splits_before"], result["splits_after"]) == (6, 1)
    assert result["merge_status"] == "success" and result["merged_files"] == 6
    assert result["query_speedup"] > 0
    assert (out / "merge-splits.md").read_text().startswith("# MERGE SPLITS")


def test_deletes_benchmark_smoke(tmp_path: Path) -> None:
    """tests/benchmarks/deletes.py at a tiny size, in its own process (it owns its session): on
    both layouts every DELETE removed its user's rows without rewriting a split (the script
    checks every answer against the source rows and exits 1 otherwise)."""
    out = tmp_path / "deletes"
    _run_script(
        "deletes.py", ["--rows", "8000", "--appends", "2", "--runs", "1", "--deletes", "2"], out
    )
    result = json.loads((out / "deletes.json").read_text())
    assert [r["layout"] for r in result["layouts"]] == ["splits", "companion"]
    for r in result["layouts"]:
        assert r["deleted_rows"] == sum(r["rows_per_user"]) + r["deleted_rows_after"]
        assert r["delete_over_search"] > 0 and r["deletion_vectors"] > 0
    assert (out / "deletes.md").read_text().startswith("# DELETE through deletion vectors")


def test_ranked_benchmark_smoke(tmp_path: Path) -> None:
    """tests/benchmarks/ranked.py on a tiny table of two appends, in its own process: on both
    layouts the pushed top-k by `_score` equals Spark's over Parquet with the scores
    precomputed (the script exits 1 otherwise), answered on the driver."""
    out = tmp_path / "bench-ranked"
    _run_script("ranked.py", ["--rows", "6000", "--appends", "2", "--runs", "1"], out)
    result = json.loads((out / "ranked.json").read_text())
    assert result["mismatches"] == []
    assert set(result["layouts"]) == {"splits", "companion"}
    for r in result["layouts"].values():
        assert r["pushed_top_n"] and r["answered_on_driver"] and r["median_s"] > 0
    assert (out / "ranked.md").read_text().startswith("# Ranked search")


def test_aggregates_benchmark_smoke(tmp_path: Path) -> None:
    """tests/benchmarks/aggregates.py on a tiny table of three appends, in its own process (it
    owns its session): every query gives Parquet's answer, and the pushed ones ship no more
    rows than groups per split."""
    out = tmp_path / "bench-aggregates"
    _run_script(
        "aggregates.py", ["--rows", "9000", "--splits", "3", "--runs", "1", "--warmup", "1"], out
    )
    result = json.loads((out / "aggregates.json").read_text())
    assert result["splits"] == 3 and result["verified"]
    queries = result["queries"]
    assert set(queries) == {"level_counts", "host_level_avg", "hourly_one_day", "ts_min_max"}
    for name, q in queries.items():
        assert "PushedAggregation" in q["scan"], (name, q["scan"])
        assert q["scan_rows"] <= 3 * max(1, q["groups"]), (name, q["scan_rows"])
        assert q["parquet_median_s"] > 0 and q["indextables_median_s"] > 0, name
    assert "indextables_date_histogram(ts, '1h'" in queries["hourly_one_day"]["scan"]
    assert "AnsweredFromLog: true" in queries["ts_min_max"]["scan"]
    # Raw tantivy4java on the same splits (the bench classes are compiled before pytest runs in
    # build/test.sh): the same number of groups for every question.
    if harness_classpath("io.indextables.spark.bench.AggregateCeiling") is not None:
        raw = result["ceiling"]["queries"]
        for name, q in queries.items():
            assert raw[name]["groups"] == q["groups"] and raw[name]["median_s"] > 0, name
    assert (out / "aggregates.md").read_text().startswith("# Aggregates")


def test_companion_indexing_benchmark_smoke(tmp_path: Path) -> None:
    """tests/benchmarks/companion_indexing.py on a tiny file, in its own process: every
    variant indexes every row, and leaving columns out of the index makes a smaller split."""
    out = tmp_path / "companion-indexing"
    _run_script("companion_indexing.py", ["--rows", "3000"], out)
    result = json.loads((out / "companion-indexing.json").read_text())
    variants = {(v["mode"], len(v["skipped"])): v for v in result["variants"]}
    assert set(variants) == {(m, n) for m in ("DISABLED", "HYBRID", "PARQUET_ONLY") for n in (0, 2)}
    for (mode, _), v in variants.items():
        assert v["cpu_s"] >= 0 and v["split_bytes"] > 0, (mode, v)
        assert variants[(mode, 2)]["split_bytes"] < variants[(mode, 0)]["split_bytes"], mode
    assert (out / "companion-indexing.md").read_text().startswith("# createFromParquet")


def test_streaming_benchmark_smoke(tmp_path: Path, shared_data: Path) -> None:
    """tests/benchmarks/streaming.py for a few short triggers, in its own process (it owns its
    session; it needs the loghub lines, so the test skips without ../shared/data): the table
    holds every source row once (the script exits 1 otherwise) and each batch has its lag."""
    out = tmp_path / "streaming"
    _run_script(
        "streaming.py",
        ["--duration-s", "12", "--trigger-s", "3", "--rows-per-second", "200"],
        out,
    )
    result = json.loads((out / "streaming.json").read_text())
    assert result["every_row_once"] and result["rows_stored"] > 0
    assert result["batches"] and all("lag_s" in b for b in result["batches"])
    assert result["splits_after_merges"] >= 1
    assert (out / "streaming.md").read_text().startswith("# Streaming ingest")


def test_micro_batches_benchmark_smoke(tmp_path: Path) -> None:
    """tests/benchmarks/micro_batches.py with 4 micro-batches, in its own process: the streamed,
    batch-written and Parquet tables give the same answers (the script exits 1 otherwise)."""
    out = tmp_path / "micro-batches"
    _run_script(
        "micro_batches.py",
        ["--batches", "4", "--rows-per-batch", "500", "--runs", "1", "--warmup", "1"],
        out,
    )
    result = json.loads((out / "micro-batches.json").read_text())
    assert result["mismatches"] == [] and result["micro_batches"] == 4
    assert result["rows_stored"] == {"streamed": 2000, "batch": 2000, "parquet": 2000}
    assert all(v > 0 for v in result["streamed_over_batch"].values())
    assert (out / "micro-batches.md").read_text().startswith("# A table of 4 micro-batches")


def test_compare_lines_of_a_committed_run_with_itself(tmp_path: Path) -> None:
    """tests/benchmarks/compare_lines.py over a committed run of the suite and itself: every
    ingest and every query of both table layouts gets a row, and each comparison is 1."""
    import subprocess

    here = Path(__file__).resolve().parent
    run = here / "results" / "2026-11-27-2M-snapshot-memos"
    done = subprocess.run(
        [
            sys.executable,
            str(here / "compare_lines.py"),
            str(run),
            str(run),
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((tmp_path / "lines.json").read_text())
    queries = json.loads((run / "results.json").read_text())["queries"]
    # 3 ingests, every query on the one-write table, every query on both layouts of the appends.
    assert len(result["rows"]) == 3 + len(queries) + 2 * len(queries)
    assert all(r["ratio_b_over_a"] == 1.0 for r in result["rows"])
    assert result["geometric_mean"] == 1.0
