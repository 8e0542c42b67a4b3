"""A real Spark Connect server with the plugin, started on 127.0.0.1 by the tests.

It is Spark's own `SparkConnectServer` (on Spark 3.5, spark-connect_2.12 3.5.0, which
build/package.sh copies to target/oracle-jars; Spark 4 ships it), run by the installed PySpark's
spark-submit with the settings `indextables.connect_server_settings()` gives (the ones
`python -m indextables connect-server` prints). A server that does not start fails the test
that needs it: it never skips.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pyspark

from delta_oracle import ORACLE_JARS_DIR, SPARK_LINE
from indextables.session import connect_server_settings
from storage_servers import _stop, _wait_for_port, free_port

CONNECT_JAR: Path | None = (
    ORACLE_JARS_DIR / "spark-connect_2.12-3.5.0.jar" if SPARK_LINE == "3.5" else None
)
"""The server's JAR on Spark 3.5, where it is a package of its own; Spark 4 ships it."""
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


@dataclass
class ConnectServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        _stop(self.process)


def start_connect_server(work: Path) -> ConnectServer:
    if CONNECT_JAR is not None and not CONNECT_JAR.is_file():
        raise RuntimeError(
            f"the Spark Connect server JAR is missing at {CONNECT_JAR}: run build/package.sh"
        )
    spark_home = Path(pyspark.__file__).resolve().parent
    port = free_port()
    settings = connect_server_settings()
    jars = [str(j) for j in (CONNECT_JAR,) if j is not None] + [settings.pop("spark.jars")]
    settings.update(
        {
            "spark.connect.grpc.binding.port": str(port),
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.warehouse.dir": str(work / "warehouse"),
            "spark.driver.extraJavaOptions": f"-Djava.io.tmpdir={work} -Dderby.system.home={work}",
        }
    )
    command = [
        str(spark_home / "bin" / "spark-submit"),
        "--master",
        "local[2]",
        "--driver-memory",
        "1g",
        "--class",
        SERVER_CLASS,
        "--jars",
        ",".join(jars),
    ]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    command.append("spark-internal")
    log = work / "connect-server.log"
    env = dict(os.environ, SPARK_HOME=str(spark_home))
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=work
        )
    # The JVM takes a while to start and load the plugin.
    _wait_for_port(port, process, "Spark Connect server", log)
    return ConnectServer(f"sc://127.0.0.1:{port}", process, log)
