"""Points a SparkSession builder at the plugin JAR shipped inside this package."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Final

from pyspark.sql import SparkSession

from indextables._lines import SPARK_LINE_JARS
from indextables._version import __version__
from indextables.exceptions import install_exception_mapping

__all__ = [
    "CATALOG_CLASS",
    "EXTENSIONS_CLASS",
    "JAR_NAME",
    "REDACTION_KEY",
    "SPARK_LINE_JARS",
    "SPARK_SETTINGS",
    "UnsupportedSparkVersionError",
    "configure_spark",
    "connect_server_command",
    "connect_server_settings",
    "jar_choice",
    "jar_path",
    "spark_line",
]

JAR_NAME: Final[str] = SPARK_LINE_JARS["3.5"]
"""File name of the Spark 3.5 assembly JAR; its version is the package's version."""


class UnsupportedSparkVersionError(RuntimeError):
    """The installed PySpark is of a Spark line this package ships no JAR for."""


EXTENSIONS_CLASS: Final[str] = "io.indextables.spark.extensions.IndexTables4SparkExtensions"
"""The plugin's SparkSessionExtensions class (SQL `indexquery` and friends)."""

CATALOG_CLASS: Final[str] = "io.indextables.spark.catalog.IndexTables4SparkCatalog"
"""The session catalog: tables `USING indextables` by name, and `indextables.`/path``."""

_CATALOG_KEY: Final[str] = "spark.sql.catalog.spark_catalog"

REDACTION_KEY: Final[str] = "spark.redaction.regex"
"""Spark's pattern of setting names whose values it hides (UI, event log, SQL tab)."""

SPARK_DEFAULT_REDACTION: Final[str] = "(?i)secret|password|token|access[.]?key"
"""Spark 3.5's default REDACTION_KEY."""

REDACTED_STORAGE_NAMES: Final[str] = "(?i:account[.]?key|connection[.]?string)"
"""The plugin's secret settings that Spark's default pattern misses (its Azure account key
and connection string); configure_spark adds them to REDACTION_KEY."""

_JAR_PLACEHOLDER: Final[str] = "{jar}"

SPARK_SETTINGS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "spark.jars": _JAR_PLACEHOLDER,
        "spark.sql.extensions": EXTENSIONS_CLASS,
    }
)
"""Every Spark setting configure_spark makes. `{jar}` stands for jar_path()."""

# Settings whose value is a comma-separated list: ours is appended to what the builder holds.
_LIST_SETTINGS: Final[frozenset[str]] = frozenset({"spark.jars", "spark.sql.extensions"})

_JARS_DIR: Final[Path] = Path(__file__).resolve().parent / "jars"


def _installed_pyspark() -> str:
    import pyspark

    return str(pyspark.__version__)


def spark_line(pyspark_version: str | None = None) -> str:
    """The Spark line ("3.5", "4.0", "4.1", "4.2") whose JAR serves `pyspark_version` (by default
    the installed PySpark's version).

    Raises UnsupportedSparkVersionError, naming the version and the lines served, for any other.
    """
    version = pyspark_version if pyspark_version is not None else _installed_pyspark()
    match = re.match(r"(\d+)\.(\d+)(?:\.|$)", version)
    line = f"{match.group(1)}.{match.group(2)}" if match else None
    if line is None or line not in SPARK_LINE_JARS:
        lines = [f"{x}.x" for x in SPARK_LINE_JARS]
        served = ", ".join(lines[:-1]) + " and " + lines[-1]
        raise UnsupportedSparkVersionError(
            f"indextables-spark {__version__} serves Spark and PySpark {served}; {version} is "
            "not one of them. Install a PySpark it serves (pip install 'pyspark>=3.5,<4.3')."
        )
    return line


def jar_choice(pyspark_version: str | None = None) -> tuple[str, str]:
    """The plugin JAR for `pyspark_version` (by default the installed PySpark's), and why it
    was chosen, as `python -m indextables info` prints it."""
    version = pyspark_version if pyspark_version is not None else _installed_pyspark()
    line = spark_line(version)
    path = _JARS_DIR / SPARK_LINE_JARS[line]
    if not path.is_file():
        raise FileNotFoundError(
            f"IndexTables plugin JAR not found: looked for {path}. This installation of "
            f"indextables-spark {__version__} does not ship its JAR for Spark {line}; build it "
            "with build/package.sh, or pass the assembly to Spark yourself with --jars."
        )
    return str(path), f"PySpark {version} is installed: the JAR of the Spark {line} line"


def jar_path(pyspark_version: str | None = None) -> str:
    """Return the absolute path of the plugin JAR shipped in this package for the installed
    PySpark (or for `pyspark_version`): the Spark 3.5 JAR for PySpark 3.5.x, the Spark 4 JAR
    for PySpark 4.0.x, 4.1.x and 4.2.x.

    Raises UnsupportedSparkVersionError for a PySpark of another line, and FileNotFoundError,
    naming the path it looked at, when the package was installed without the JAR (for example
    from a source checkout before build/package.sh ran).
    """
    return jar_choice(pyspark_version)[0]


def configure_spark(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the IndexTables plugin to a SparkSession builder and return the same builder.

    The session is not started. `spark.jars` keeps any JARs the builder already names and
    gains the shipped plugin JAR, and `spark.sql.extensions` keeps any extensions already set
    and gains EXTENSIONS_CLASS (each once, however often this is called).
    `spark.sql.catalog.spark_catalog` becomes CATALOG_CLASS unless the builder sets it already.
    `spark.redaction.regex` (Spark's default, or the builder's) also hides the plugin's Azure
    account key and connection string. The plugin's errors are raised as the exceptions of
    `indextables.exceptions` (`install_exception_mapping`).

    >>> spark = configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
    """
    if not isinstance(builder, SparkSession.Builder):
        raise TypeError(
            "configure_spark expects a pyspark.sql.SparkSession.Builder "
            f"(such as SparkSession.builder), got {type(builder).__name__}"
        )
    options: Mapping[str, object] = getattr(builder, "_options", {})
    # A Spark Connect client (`builder.remote(...)`) has no JVM of its own: the plugin is the
    # server's (connect_server_settings), and only the errors' mapping is the client's.
    remote = options.get("spark.remote") is not None
    install_exception_mapping(connect=remote)
    if remote:
        return builder
    for key, template in SPARK_SETTINGS.items():
        value = jar_path() if template == _JAR_PLACEHOLDER else template
        if key in _LIST_SETTINGS:
            value = _append_to_list(options.get(key), value)
        builder = builder.config(key, value)
    # Secrets of the object-store settings stay out of the UI, the SQL tab and event logs.
    redaction = str(options.get(REDACTION_KEY) or SPARK_DEFAULT_REDACTION)
    if REDACTED_STORAGE_NAMES not in redaction:
        builder = builder.config(REDACTION_KEY, f"{redaction}|{REDACTED_STORAGE_NAMES}")
    # One session catalog only: another one set there (Delta's, say) is kept.
    if _CATALOG_KEY not in options:
        builder = builder.config(_CATALOG_KEY, CATALOG_CLASS)
    return builder


def connect_server_settings(spark_version: str | None = None) -> dict[str, str]:
    """The settings a Spark Connect server needs to serve IndexTables to its clients: the
    plugin JAR (this package's, for the server's Spark `spark_version`; by default the installed
    PySpark's), the extensions, the session catalog and the redaction of the plugin's secrets, as
    configure_spark sets them on a classic session."""
    return {
        "spark.jars": jar_path(spark_version),
        "spark.sql.extensions": EXTENSIONS_CLASS,
        _CATALOG_KEY: CATALOG_CLASS,
        REDACTION_KEY: f"{SPARK_DEFAULT_REDACTION}|{REDACTED_STORAGE_NAMES}",
    }


SPARK_CONNECT_PACKAGE: Final[str] = "org.apache.spark:spark-connect_2.12:3.5.0"
"""The Spark Connect server of Spark 3.5 (a separate package there; 3.5.0 is the one Maven
Central serves for 3.5, and it runs on later 3.5 releases). Spark 4 ships its server."""


def connect_server_command(
    spark_home: str = "$SPARK_HOME", spark_version: str | None = None
) -> list[str]:
    """The command that starts a Spark Connect server with the plugin, from a Spark
    installation at `spark_home` (Spark's own `sbin/start-connect-server.sh`) of version
    `spark_version` (by default the installed PySpark's)."""
    version = spark_version if spark_version is not None else _installed_pyspark()
    command = [f"{spark_home}/sbin/start-connect-server.sh"]
    if spark_line(version) == "3.5":
        command += ["--packages", SPARK_CONNECT_PACKAGE]
    for key, value in connect_server_settings(version).items():
        command += ["--conf", f"{key}={value}"]
    return command


def _append_to_list(existing: object, value: str) -> str:
    items = [item.strip() for item in str(existing or "").split(",") if item.strip()]
    if value not in items:
        items.append(value)
    return ",".join(items)
