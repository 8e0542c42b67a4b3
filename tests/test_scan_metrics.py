"""Scan metrics in the Spark UI (`metrics/ScanMetrics`): a real application with its UI on
(tests/ui_app.py, in a process of its own) runs a partition-pruned query, a statistics-pruned
query, a search read by tasks and a search the driver answers. The metrics are read back the
ways people read them: Spark's SQL REST API, and the SQL tab's page in headless Chromium, whose
DOM must hold the metric names (a screenshot of it is docs/images/sql-tab-metrics.png)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from helpers import scan_metrics

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent

# What the SQL tab calls each metric (its description).
METRIC_NAMES = (
    "splits in the snapshot",
    "splits pruned by partition",
    "splits pruned by min/max statistics",
    "splits searched",
    "documents matched",
    "rows returned by the index",
    "bytes fetched from storage",
    "split cache hits",
    "native search time",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


class App:
    """The running application: its UI address, id, and each query's row count."""

    def __init__(self, info: dict[str, Any], proc: subprocess.Popen[str]) -> None:
        self.url: str = info["url"]
        self.app_id: str = info["appId"]
        self.rows: dict[str, int] = info["rows"]
        self.proc = proc

    def execution(self, description: str) -> dict[str, Any]:
        executions = _get(
            f"{self.url}/api/v1/applications/{self.app_id}/sql?details=true&length=1000"
        )
        found = [e for e in executions if e["description"] == description]
        assert found, f"no SQL execution described {description!r}: " + str(
            [e["description"] for e in executions]
        )
        return dict(found[-1])

    def scan_metrics(self, description: str) -> dict[str, str]:
        """The metrics of the query's IndexTables scan node, by name."""
        nodes = self.execution(description)["nodes"]
        scans = [
            n for n in nodes if n["nodeName"].startswith(("BatchScan", "IndexTablesLocalScan"))
        ]
        assert len(scans) == 1, [n["nodeName"] for n in nodes]
        return {m["name"]: m["value"] for m in scans[0]["metrics"]}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    work = tmp_path_factory.mktemp("ui-app")
    log = (work / "app.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, str(TESTS_DIR / "ui_app.py"), str(work / "t"), str(_free_port())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()
        assert line, "the UI application ended early:\n" + (work / "app.log").read_text()[-4000:]
        yield App(json.loads(line), proc)
        proc.stdin.write("quit\n")
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()


def _count(value: str) -> int:
    return int(value.replace(",", ""))


def test_every_metric_is_on_the_scan_node(app: App) -> None:
    metrics = app.scan_metrics("metrics:search")
    missing = [m for m in METRIC_NAMES if m not in metrics]
    assert not missing, f"missing {missing} among {sorted(metrics)}"


def test_a_partition_pruned_query_counts_the_splits_it_pruned(app: App) -> None:
    metrics = app.scan_metrics("metrics:partition")
    assert _count(metrics["splits in the snapshot"]) == 12
    assert _count(metrics["splits pruned by partition"]) == 9
    assert _count(metrics["splits pruned by min/max statistics"]) == 0
    assert _count(metrics["splits searched"]) == 3
    assert _count(metrics["rows returned by the index"]) == app.rows["metrics:partition"] == 1500


def test_a_statistics_pruned_query_counts_the_splits_it_pruned(app: App) -> None:
    metrics = app.scan_metrics("metrics:statistics")
    assert _count(metrics["splits in the snapshot"]) == 12
    assert _count(metrics["splits pruned by partition"]) == 0
    assert _count(metrics["splits pruned by min/max statistics"]) == 11
    assert _count(metrics["splits searched"]) == 1
    assert _count(metrics["documents matched"]) == app.rows["metrics:statistics"] == 100


def test_a_search_by_tasks_counts_its_matches_and_native_time(app: App) -> None:
    metrics = app.scan_metrics("metrics:search")
    matches = app.rows["metrics:search"]
    # Ids divisible by 7 among 0..5999.
    assert matches == len(range(0, 6000, 7))
    assert _count(metrics["splits searched"]) == 12
    assert _count(metrics["documents matched"]) == matches
    assert _count(metrics["rows returned by the index"]) == matches
    assert metrics["native search time"].endswith(("ms", " s"))
    # The splits are on the local disk: nothing is fetched from an object store.
    assert metrics["bytes fetched from storage"] == "0.0 B"


def test_a_search_the_driver_answered_reports_from_the_driver(app: App) -> None:
    execution = app.execution("metrics:driver")
    assert not execution["successJobIds"], "the driver answers it without a job"
    metrics = app.scan_metrics("metrics:driver")
    matches = app.rows["metrics:driver"]
    assert matches == len([i for i in range(6000) if i % 7 == 0 and (i // 500) % 4 == 2])
    assert _count(metrics["splits pruned by partition"]) == 9
    assert _count(metrics["splits searched"]) == 3
    assert _count(metrics["documents matched"]) == matches


def test_the_sql_tab_shows_the_metrics_to_a_person(app: App, tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    assert chromium, "chromium is not installed: build/servers.sh installs it"
    execution = app.execution("metrics:search")
    page = f"{app.url}/SQL/execution/?id={execution['id']}"
    common = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
    dom = subprocess.run(
        [*common, "--virtual-time-budget=10000", "--dump-dom", page],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    # Spark 4.2's page carries the metrics as JSON, where "/" may be written "\/".
    dom = dom.replace("\\/", "/")
    missing = [m for m in METRIC_NAMES if m not in dom]
    assert not missing, f"the SQL tab's page lacks {missing}"
    shot = tmp_path / "sql-tab-metrics.png"
    subprocess.run(
        [
            *common,
            "--virtual-time-budget=10000",
            "--window-size=1400,1600",
            f"--screenshot={shot}",
            page,
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 10_000
    # The committed screenshot is refreshed by hand from this one (see docs/metrics.md).
    assert (REPO_ROOT / "docs" / "images" / "sql-tab-metrics.png").is_file()


def test_a_driver_answered_scan_under_a_shuffle_keeps_its_metrics(
    spark: SparkSession, tmp_table: str
) -> None:
    # A local scan below an exchange travels in the tasks' closures, its metrics with it.
    rows = spark.range(0, 300).selectExpr(
        "id", "CASE WHEN id % 3 = 0 THEN 'disk full' ELSE 'all good' END AS message"
    )
    rows.coalesce(1).write.format("indextables").option(
        "spark.indextables.indexing.typemap.message", "text"
    ).save(tmp_table)
    df = (
        spark.read.format("indextables")
        .load(tmp_table)
        .filter("message indexquery 'disk'")
        .orderBy("id")
    )
    got = [r["id"] for r in df.collect()]
    assert got == list(range(0, 300, 3))
    assert "AnsweredOnDriver: true" in str(df._jdf.queryExecution().executedPlan().toString())
    metrics = scan_metrics(df)
    assert metrics["splitsInSnapshot"] == 1 and metrics["splitsSearched"] == 1
    assert metrics["documentsMatched"] == 100 and metrics["rowsReturned"] == 100
