"""Shared fixtures: one local SparkSession configured the way users do it, and log datasets."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import DataFrame, SparkSession

import delta_oracle
import indextables
from helpers import session_builder
from logdata import LOGS_SCHEMA, generate_logs
from storage_servers import AzureServer, S3Server, start_azurite, start_s3

# Spark's Python workers (UDFs, Arrow) run this interpreter, the virtual environment's with its
# pyarrow, not whichever `python3` is first on PATH.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
LOGS_ROWS = 20_000
LOGS_SEED = 20240301


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked `companion_sample(n)` (tests/pytest.ini) runs each of its generated cases on
    the splits layout, and every n-th of them on the companion layout: the layouts share the
    translation of a query, so the generated cases check it on one, and a sample of them checks
    the companion's own reading of the rows."""
    seen: dict[str, int] = {}
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        marker = item.get_closest_marker("companion_sample")
        callspec = getattr(item, "callspec", None)
        if marker is None or callspec is None or callspec.params.get("layout") != "companion":
            kept.append(item)
            continue
        name = item.originalname if isinstance(item, pytest.Function) else item.name
        position = seen.get(name, 0)
        seen[name] = position + 1
        (kept if position % int(marker.args[0]) == 0 else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    warehouse = tmp_path_factory.mktemp("warehouse")
    builder = session_builder("indextables-tests", {"spark.sql.warehouse.dir": str(warehouse)})
    builder = indextables.configure_spark(builder)
    # Delta Lake beside the plugin, the oracle of row-level statements (tests/delta_oracle.py),
    # when build/package.sh has put its JARs in place; a test that needs it fails without them.
    if delta_oracle.is_installed():
        builder = delta_oracle.configure(builder)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


@pytest.fixture
def tmp_table(tmp_path: Path) -> str:
    """A fresh, not yet existing table path."""
    return str(tmp_path / "table")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder next to the repository (../shared/data); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent (it is not part of the repo)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def logs_rows() -> list[tuple[object, ...]]:
    """The rows behind logs_df, as Python tuples in LOGS_SCHEMA order."""
    loghub = SHARED_DATA / "loghub"
    rows, _source = generate_logs(LOGS_ROWS, seed=LOGS_SEED, loghub_dir=loghub)
    return rows


@pytest.fixture(scope="session")
def logs_df(spark: SparkSession, logs_rows: list[tuple[object, ...]]) -> DataFrame:
    """~20k deterministic log rows: id, ts, day, level, component, host, latency_ms, status, ok,
    message (loghub-template sentences when the shared data is present), with some nulls."""
    df = spark.createDataFrame(logs_rows, LOGS_SCHEMA).repartition(2, "id").cache()
    df.count()
    return df


LAYOUT_KEY = "spark.indextables.write.layout"
LAYOUTS = ("splits", "companion")


@pytest.fixture(scope="module", params=LAYOUTS)
def layout(request: pytest.FixtureRequest, spark: SparkSession) -> Iterator[str]:
    """Each table layout in turn, as the session's default for new tables: a test file whose
    answers must not depend on the layout takes it for every test with
    `pytestmark = pytest.mark.usefixtures("layout")`, and so runs once per layout (all of its
    tests on one layout, then all on the other)."""
    layout_name = str(request.param)
    spark.conf.set(LAYOUT_KEY, layout_name)
    yield layout_name
    spark.conf.unset(LAYOUT_KEY)


@pytest.fixture(scope="module")
def searches_by_tasks(spark: SparkSession) -> Iterator[None]:
    """Every search of the module read by tasks, never answered on the driver
    (`read/DriverSearch`): for tests of the tasks themselves (their grouping, placement,
    runtime filters)."""
    key = "spark.indextables.read.driverSearch.maxRows"
    spark.conf.set(key, "0")
    yield
    spark.conf.unset(key)


@pytest.fixture(scope="session")
def _logs_tables(
    spark: SparkSession, logs_df: DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """The logs tables written so far this session, by layout."""
    return {}


@pytest.fixture(scope="module")
def logs_table(
    layout: str,
    spark: SparkSession,
    logs_df: DataFrame,
    tmp_path_factory: pytest.TempPathFactory,
    _logs_tables: dict[str, str],
) -> str:
    """logs_df written once per session and layout as an IndexTables table, `message` typed as
    text (so every test that reads it runs on both layouts)."""
    if layout not in _logs_tables:
        path = str(tmp_path_factory.mktemp(f"logs-{layout}") / "indextables")
        (
            logs_df.write.format("indextables")
            .option("spark.indextables.indexing.typemap.message", "text")
            .option(LAYOUT_KEY, layout)
            .mode("overwrite")
            .save(path)
        )
        _logs_tables[layout] = path
    return _logs_tables[layout]


@pytest.fixture(scope="session")
def logs_parquet(
    spark: SparkSession, logs_df: DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> DataFrame:
    """The same rows as a Parquet table: the reference the differential tests compare with."""
    path = str(tmp_path_factory.mktemp("logs") / "parquet")
    logs_df.write.mode("overwrite").parquet(path)
    return spark.read.parquet(path)


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A moto S3 server on 127.0.0.1 for the session (fails, never skips, when absent)."""
    server = start_s3(tmp_path_factory.mktemp("moto"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def azure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AzureServer]:
    """An Azurite blob server on 127.0.0.1 for the session (fails, never skips, when absent)."""
    server = start_azurite(tmp_path_factory.mktemp("azurite"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel build/wheel.sh builds from this checkout (with the JAR package.sh shipped)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        ["bash", str(REPO_ROOT / "build" / "wheel.sh"), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = out.glob("indextables_spark-*.whl")
    return wheel


@pytest.fixture(scope="session")
def fresh_venv(built_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with only the built wheel (and its dependencies) installed, by
    the Docker image's own step, docker/install_python.sh (without JupyterLab), with the PySpark
    of this run (so each Spark line's run tests its own JAR). Its python."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    run = subprocess.run(
        [
            "bash",
            str(REPO_ROOT / "docker" / "install_python.sh"),
            str(venv),
            str(built_wheel.parent),
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, INDEXTABLES_JUPYTER="0", INDEXTABLES_PYSPARK=pyspark.__version__),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return venv / "bin" / "python"


@pytest.fixture(scope="session")
def ice(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Iceberg's Spark catalog over a Hadoop warehouse, as `ice` (the session catalog stays the
    plugin's); yields the warehouse directory. One for the whole run: Spark keeps a catalog it
    loaded, so a warehouse set later would not be the one `ice` uses."""
    catalog = delta_oracle.ICEBERG_CATALOG
    warehouse = tmp_path_factory.mktemp("iceberg-warehouse")
    settings = {
        f"spark.sql.catalog.{catalog}": "org.apache.iceberg.spark.SparkCatalog",
        f"spark.sql.catalog.{catalog}.type": "hadoop",
        f"spark.sql.catalog.{catalog}.warehouse": str(warehouse),
        # Every read sees the table's latest metadata, changed through the API or not.
        f"spark.sql.catalog.{catalog}.cache-enabled": "false",
    }
    for key, value in settings.items():
        spark.conf.set(key, value)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.db")
    yield warehouse
