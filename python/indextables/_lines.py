"""The Spark lines the package serves, and the JAR it ships for each: plain data, importable
without PySpark (the package's own error for a missing PySpark names these lines)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from indextables._version import __version__

_SPARK4_JAR: Final[str] = f"indextables-spark_2.13-assembly-{__version__}.jar"

SPARK_LINE_JARS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "3.5": f"indextables-spark-assembly-{__version__}.jar",
        "4.0": _SPARK4_JAR,
        "4.1": _SPARK4_JAR,
        "4.2": _SPARK4_JAR,
    }
)
"""The assembly JAR the package ships for each Spark line it serves (a line is a Spark
`major.minor` and its patch releases): Scala 2.12 for Spark 3.5; one Scala 2.13 JAR, compiled
against Spark 4.0, for Spark 4.0, 4.1 and 4.2 (it calls the Catalyst signatures that 4.1 and 4.2
changed by reflection). Spark 4.3 is not served: there is no Spark 4.3 to test it on."""

CONNECT_CLIENT_LINES: Final[tuple[str, ...]] = tuple(
    line for line in SPARK_LINE_JARS if int(line.split(".")[0]) >= 4
)
"""The lines a Python-only Spark Connect client (`pyspark-client`, from Spark 4.0) can be of."""


def spoken(lines: tuple[str, ...] | list[str]) -> str:
    """`3.5, 4.0 or 4.1`: lines as a sentence names them."""
    return lines[0] if len(lines) == 1 else f"{', '.join(lines[:-1])} or {lines[-1]}"
