"""`python -m indextables --version | info | connect-server`.

`--version` prints the package's version; `info` prints the package, the plugin JAR it ships
(with the versions the JAR was built for, read from the JAR itself), PySpark, tantivy4java,
Python and the platform, one `name: value` line each, without starting Spark. `connect-server`
prints the command that starts a Spark Connect server serving IndexTables (the plugin JAR and
the settings a classic session gets from `configure_spark`), for clients with no JVM of their
own (`SparkSession.builder.remote("sc://host:15002")`).
"""

from __future__ import annotations

import argparse
import platform
import shlex
import sys
import zipfile
from collections.abc import Sequence
from typing import Final

from indextables._version import __version__

__all__ = ["BUILD_PROPERTIES", "info_lines", "jar_build_properties", "main"]

BUILD_PROPERTIES: Final[str] = "io/indextables/spark/build.properties"
"""The JAR entry the build writes its versions to (version, sparkVersion, tantivy4javaVersion)."""


def jar_build_properties(jar: str) -> dict[str, str]:
    """The `key=value` lines of the JAR's BUILD_PROPERTIES entry."""
    with zipfile.ZipFile(jar) as archive:
        text = archive.read(BUILD_PROPERTIES).decode("utf-8")
    properties: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#"):
            properties[key.strip()] = value.strip()
    return properties


def info_lines() -> list[str]:
    """What `python -m indextables info` prints."""
    from indextables.session import SPARK_LINE_JARS, UnsupportedSparkVersionError, jar_choice

    lines = [
        f"indextables-spark: {__version__}",
        f"spark lines served: {', '.join(f'{line}.x' for line in SPARK_LINE_JARS)}",
    ]
    try:
        import pyspark
    except ImportError:
        lines.append("pyspark: not installed")
        lines.append("jar: none chosen (no PySpark is installed)")
    else:
        lines.append(f"pyspark: {pyspark.__version__}")
        # PySpark 4's `pyspark-client` has no JVM: the plugin runs on the Connect server.
        if getattr(pyspark, "is_remote_only", lambda: False)():
            lines.append("pyspark kind: Spark Connect client only (pyspark-client)")
        else:
            lines.append("pyspark kind: classic (with Spark's JVM)")
        try:
            jar, why = jar_choice()
        except (FileNotFoundError, UnsupportedSparkVersionError) as e:
            lines.append(f"jar: none ({e})")
        else:
            built = jar_build_properties(jar)
            lines += [
                f"jar: {jar}",
                f"jar chosen because: {why}",
                f"jar version: {built.get('version', 'unknown')}",
                f"jar built for spark: {built.get('sparkVersion', 'unknown')}",
                f"tantivy4java: {built.get('tantivy4javaVersion', 'unknown')}",
            ]
    lines += [
        f"python: {platform.python_version()} ({sys.executable})",
        f"platform: {platform.platform()} {platform.machine()}",
    ]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m indextables",
        description="IndexTables for Spark: the versions of this installation.",
    )
    parser.add_argument("--version", action="version", version=f"indextables-spark {__version__}")
    parser.add_argument(
        "command",
        nargs="?",
        choices=["info", "connect-server"],
        help="info: the versions of the package, its JAR, Spark and tantivy4java; "
        "connect-server: the command that starts a Spark Connect server with the plugin",
    )
    parser.add_argument(
        "--spark-version",
        help="connect-server: the server's Spark version (default: the installed PySpark's)",
    )
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "connect-server":
        from indextables.session import UnsupportedSparkVersionError, connect_server_command

        try:
            command = connect_server_command(spark_version=args.spark_version)
        except (FileNotFoundError, UnsupportedSparkVersionError) as e:
            print(f"python -m indextables connect-server: {e}", file=sys.stderr)
            return 2
        print(" ".join(shlex.quote(a) if not a.startswith("$") else a for a in command))
        return 0
    print("\n".join(info_lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
