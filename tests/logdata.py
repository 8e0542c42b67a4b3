"""Deterministic, realistic log rows for the end-to-end tests and the demo.

Messages come from the loghub templates (`<System>_2k.log_structured.csv`, column
`EventTemplate`) when the shared data folder is present, else from built-in templates; each `<*>`
slot is refilled with a fresh value (block ids, IPs, numbers...) so the vocabulary keeps growing.
The loghub files are read at run time only and never copied into the project.
"""

from __future__ import annotations

import csv
import datetime as dt
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

__all__ = [
    "LOGS_SCHEMA",
    "LogTemplate",
    "builtin_templates",
    "generate_logs",
    "load_loghub_templates",
]

LOGS_SCHEMA = StructType(
    [
        StructField("id", LongType(), False),
        StructField("ts", TimestampType(), True),
        StructField("day", DateType(), True),
        StructField("level", StringType(), True),
        StructField("component", StringType(), True),
        StructField("host", StringType(), True),
        StructField("latency_ms", DoubleType(), True),
        StructField("status", IntegerType(), True),
        StructField("ok", BooleanType(), True),
        StructField("message", StringType(), True),
    ]
)

LEVELS = ("INFO", "WARN", "ERROR", "DEBUG")
_LEVEL_WEIGHTS = (70, 15, 10, 5)
_START = dt.datetime(2024, 3, 1, 0, 0, 0)


@dataclass(frozen=True)
class LogTemplate:
    system: str
    component: str
    level: str | None
    template: str


def _normalise_level(raw: str) -> str | None:
    value = raw.strip().upper()
    if value in ("I", "INFO", "NOTICE", "-"):
        return "INFO"
    if value in ("W", "WARN", "WARNING"):
        return "WARN"
    if value in ("E", "ERROR", "FATAL", "SEVERE", "F", "FAILURE", "CRITICAL"):
        return "ERROR"
    if value in ("D", "V", "DEBUG", "TRACE", "VERBOSE"):
        return "DEBUG"
    return None


def load_loghub_templates(loghub_dir: Path) -> list[LogTemplate]:
    """One LogTemplate per distinct (system, component, template) in the loghub CSV files."""
    seen = set()
    templates: list[LogTemplate] = []
    for path in sorted(loghub_dir.glob("*_structured.csv")):
        system = path.name.split("_")[0]
        with path.open(newline="", encoding="utf-8", errors="replace") as handle:
            for row in csv.DictReader(handle):
                template = (row.get("EventTemplate") or "").strip()
                if not template:
                    continue
                component = (row.get("Component") or system).strip() or system
                level = _normalise_level(row.get("Level") or "")
                key = (system, component, template)
                if key not in seen:
                    seen.add(key)
                    templates.append(LogTemplate(system, component, level, template))
    return templates


def builtin_templates() -> list[LogTemplate]:
    """Templates shaped like loghub's, for machines without the shared data folder."""
    raw = [
        ("HDFS", "dfs.DataNode", "INFO", "Receiving block blk_<*> src: /<*> dest: /<*>"),
        ("HDFS", "dfs.DataNode", "INFO", "PacketResponder <*> for block blk_<*> terminating"),
        (
            "HDFS",
            "dfs.FSNamesystem",
            "INFO",
            "BLOCK* NameSystem.addStoredBlock: blockMap updated: <*> is added to blk_<*> size <*>",
        ),
        ("HDFS", "dfs.DataNode", "WARN", "Got exception while serving blk_<*> to /<*>"),
        ("Spark", "storage.BlockManager", "INFO", "Found block rdd_<*> locally"),
        (
            "Spark",
            "executor.Executor",
            "INFO",
            "Finished task <*> in stage <*> (TID <*>). <*> bytes result sent to driver",
        ),
        (
            "Spark",
            "executor.Executor",
            "ERROR",
            "Exception in task <*> in stage <*> (TID <*>): "
            "java.io.IOException: Connection reset by peer",
        ),
        (
            "Zookeeper",
            "NIOServerCnxn",
            "WARN",
            "caught end of stream exception EndOfStreamException: Unable to read additional "
            "data from client sessionid <*>, likely client has closed socket",
        ),
        (
            "Zookeeper",
            "QuorumCnxManager",
            "WARN",
            "Cannot open channel to <*> at election address /<*>",
        ),
        ("Zookeeper", "FastLeaderElection", "INFO", "Notification time out: <*>"),
        ("OpenSSH", "sshd", None, "Failed password for invalid user <*> from <*> port <*> ssh2"),
        ("OpenSSH", "sshd", None, "Accepted password for <*> from <*> port <*> ssh2"),
        ("OpenSSH", "sshd", None, "Connection closed by <*> [preauth]"),
        (
            "OpenStack",
            "nova.compute.manager",
            "INFO",
            "[instance: <*>] VM Started (Lifecycle Event)",
        ),
        (
            "OpenStack",
            "nova.osapi_compute.wsgi.server",
            "INFO",
            '<*> "GET <*>" status: <*> len: <*> time: <*>',
        ),
        (
            "OpenStack",
            "nova.compute.manager",
            "ERROR",
            "[instance: <*>] Instance failed to spawn: request timeout after <*> seconds",
        ),
        ("Apache", "mod_jk", "ERROR", "mod_jk child workerEnv in error state <*>"),
        ("Apache", "core", "ERROR", "[client <*>] Directory index forbidden by rule: <*>"),
        ("Hadoop", "RMContainerAllocator", "INFO", "Received completed container container_<*>"),
        (
            "Hadoop",
            "LeaseRenewer",
            "WARN",
            "Failed to renew lease for [DFSClient_NONMAPREDUCE_<*>] for <*> seconds. "
            "Will retry shortly ...",
        ),
        (
            "Hadoop",
            "TaskAttemptListenerImpl",
            "INFO",
            "Progress of TaskAttempt attempt_<*> is : <*>",
        ),
        ("BGL", "KERNEL", "ERROR", "data TLB error interrupt"),
        ("BGL", "KERNEL", "INFO", "instruction cache parity error corrected"),
        (
            "BGL",
            "APP",
            "ERROR",
            "ciod: failed to read message prefix on control stream (CioStream socket to <*>",
        ),
        ("Linux", "kernel", None, "Out of memory: Killed process <*> (<*>)"),
        (
            "Linux",
            "sshd(pam_unix)",
            None,
            "authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=<*>",
        ),
        ("Windows", "CBS", "INFO", "Session: <*> initialized by client WindowsUpdateAgent."),
        (
            "Android",
            "PowerManagerService",
            "DEBUG",
            'acquire lock=<*>, flags=<*>, tag="<*>", name=<*>, ws=null, uid=<*>, pid=<*>',
        ),
        (
            "Proxifier",
            "chrome.exe",
            None,
            "<*>:<*> close, <*> bytes sent, <*> bytes received, lifetime <*>",
        ),
        (
            "Proxifier",
            "chrome.exe",
            None,
            "<*>:<*> error : Could not connect through proxy <*>:<*> - Proxy server cannot "
            "establish a connection with the target, status code <*>",
        ),
    ]
    return [LogTemplate(s, c, lvl, t) for s, c, lvl, t in raw]


def _slot_fillers(rng: random.Random) -> Sequence[Callable[[], str]]:
    words = ["alpha", "bravo", "worker", "shuffle", "replica", "index", "cache", "tenant"]
    return (
        lambda: str(rng.randint(0, 99999)),
        lambda: str(rng.getrandbits(62)),
        lambda: f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        lambda: f"{rng.getrandbits(32):08x}",
        lambda: f"/data/{rng.choice(words)}/{rng.randint(0, 999)}",
        lambda: f"{rng.choice(words)}-{rng.randint(0, 99)}",
        lambda: f"{rng.random() * 100:.3f}",
    )


def _fill(template: str, rng: random.Random, fillers: Sequence[Callable[[], str]]) -> str:
    parts = template.split("<*>")
    out = [parts[0]]
    for part in parts[1:]:
        out.append(rng.choice(fillers)())
        out.append(part)
    return "".join(out)


Row = tuple[object, ...]


def generate_logs(
    rows: int, seed: int = 42, loghub_dir: Path | None = None
) -> tuple[list[Row], str]:
    """`rows` log rows matching LOGS_SCHEMA, and a one-line description of the text source.

    Deterministic for a given seed and source. About 1-3% of the nullable values are null.
    """
    rng = random.Random(seed)
    templates: list[LogTemplate] = []
    source = "built-in templates"
    if loghub_dir is not None and loghub_dir.is_dir():
        templates = load_loghub_templates(loghub_dir)
        if templates:
            source = f"loghub templates from {loghub_dir} (github.com/logpai/loghub)"
    if not templates:
        templates = builtin_templates()
    fillers = _slot_fillers(rng)
    hosts = [f"node-{i:02d}.dc{1 + i % 3}.example.com" for i in range(1, 25)]
    statuses = (200, 200, 200, 200, 201, 204, 301, 400, 404, 429, 500, 503)
    out: list[Row] = []
    seconds = 0.0
    for i in range(rows):
        t = rng.choice(templates)
        seconds += rng.expovariate(1 / 30.0)  # ~1 week for 20k rows
        ts = _START + dt.timedelta(seconds=round(seconds, 3))
        level = t.level or rng.choices(LEVELS, _LEVEL_WEIGHTS)[0]
        status: int | None = rng.choice(statuses)
        if level == "ERROR" and rng.random() < 0.5:
            status = 500
        latency: float | None = round(rng.lognormvariate(3.0, 1.1), 3)
        if rng.random() < 0.02:
            latency = None
        if rng.random() < 0.02:
            status = None
        out.append(
            (
                i,
                None if rng.random() < 0.005 else ts,
                ts.date(),
                None if rng.random() < 0.01 else level,
                t.component,
                None if rng.random() < 0.01 else rng.choice(hosts),
                latency,
                status,
                None if status is None else status < 500,
                None if rng.random() < 0.01 else _fill(t.template, rng, fillers),
            )
        )
    return out, source
