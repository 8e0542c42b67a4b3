"""The Python package over Spark Connect: a real Connect server with the plugin on 127.0.0.1
(tests/connect_server.py), and a client process with no JVM of its own that uses the package
as a user would (tests/connect_client.py): SQL and Column `indexquery`, the `IndexTable` API
by path and by name, a companion stream started and stopped, and the plugin's errors raised
as the package's exception classes. Each check is its own test here."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import indextables
import indextables.session
from connect_server import ConnectServer, start_connect_server
from indextables.__main__ import main as cli_main

TESTS_DIR = Path(__file__).resolve().parent
CHECKS = (
    "sql_indexquery",
    "column_functions",
    "index_table_by_path",
    "index_table_by_name",
    "malformed_query_is_invalid_query_error",
    "missing_table_is_table_not_found_error",
    "companion_stream_starts_and_stops",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectServer]:
    started = start_connect_server(tmp_path_factory.mktemp("connect-server"))
    yield started
    started.stop()


# Spark 4's Python-only client (PySpark's `pyspark-client`, no JVM and no py4j), with the package,
# as a Connect-only user installs them (build/package.sh).
CONNECT4_PYTHON = TESTS_DIR.parent / ".venv-connect4" / "bin" / "python"


def client_python() -> str:
    """The Python the client runs in: on Spark 3.5 this run's own (PySpark 3.5 with its Connect
    extra: 3.5 has no Python-only client); on Spark 4, .venv-connect4's `pyspark-client`."""
    if indextables.session.spark_line() == "3.5":
        return sys.executable
    if not CONNECT4_PYTHON.is_file():
        pytest.fail(f"no Spark Connect client venv at {CONNECT4_PYTHON}: run build/package.sh")
    return str(CONNECT4_PYTHON)


@pytest.fixture(scope="module")
def results(server: ConnectServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    work = tmp_path_factory.mktemp("connect-client")
    done = subprocess.run(
        [client_python(), str(TESTS_DIR / "connect_client.py"), server.url, str(work)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, (
        f"the Connect client ended with {done.returncode}:\n{done.stderr[-4000:]}\n"
        f"server log:\n{server.log.read_text()[-3000:]}"
    )
    parsed: dict[str, str] = json.loads(lines[-1])
    return parsed


def test_the_client_is_a_connect_session(results: dict[str, str]) -> None:
    assert results["session_type"] == "pyspark.sql.connect.session"
    # On Spark 4 the client is `pyspark-client`: Python only, no py4j (3.5 has no such client).
    if indextables.session.spark_line() != "3.5":
        assert results["py4j"] == "absent", results
        assert indextables.session.spark_line(results["pyspark_version"]) != "3.5", results


@pytest.mark.parametrize("check", CHECKS)
def test_over_spark_connect(results: dict[str, str], check: str) -> None:
    assert results[check] == "ok", results[check]


@pytest.mark.parametrize("version", [None, "3.5.9", "4.0.5"])
def test_the_cli_prints_the_server_command(
    capsys: pytest.CaptureFixture[str], version: str | None
) -> None:
    assert cli_main(["connect-server", *(["--spark-version", version] if version else [])]) == 0
    line = capsys.readouterr().out.strip()
    line_of = indextables.session.spark_line(version)
    # Spark 3.5's server is a package of its own; Spark 4 ships it.
    if line_of == "3.5":
        assert line.startswith("$SPARK_HOME/sbin/start-connect-server.sh --packages ")
        assert "org.apache.spark:spark-connect_2.12:3.5.0" in line
    else:
        assert line.startswith("$SPARK_HOME/sbin/start-connect-server.sh --conf ")
        assert "--packages" not in line
    for setting in (
        "spark.sql.extensions=io.indextables.spark.extensions.IndexTables4SparkExtensions",
        "spark.sql.catalog.spark_catalog=io.indextables.spark.catalog.IndexTables4SparkCatalog",
        f"spark.jars={indextables.jar_path(version)}",
    ):
        assert setting in line, line


def test_the_cli_refuses_a_server_of_no_served_spark_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli_main(["connect-server", "--spark-version", "4.3.0"]) == 2
    err = capsys.readouterr().err
    assert "4.3.0 is not one of them" in err and "3.5.x, 4.0.x, 4.1.x and 4.2.x" in err, err
