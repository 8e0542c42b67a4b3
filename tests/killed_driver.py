"""A Spark driver process that a test kills with SIGKILL in the middle of its work: the one
launcher of the kill -9 tests (a replaceWhere, an UPDATE).

The driver runs `body` (Python, with `spark`, `args` and `work` defined) in a session built as
tests/conftest.py builds it, in a process group of its own (the python, the spark-submit
launcher, the JVM and its Python workers, killed together), with its temporary files in its
work folder. It starts at once, so that its start-up overlaps the test's own work: it warms up
(a small write, which loads the plugin and its native library), prints READY, waits for the
test to say go, prints RUNNING, runs `body`, and prints DONE if nobody kills it first."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
PATIENCE_S = 90.0

_SCRIPT = r"""
import json
import sys
import time
from pathlib import Path

import indextables

tests_dir, work, conf, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4:]
sys.path.insert(0, tests_dir)
from helpers import session_builder

builder = session_builder(
    "indextables-killed-driver",
    {"spark.local.dir": work, "spark.driver.extraJavaOptions": f"-Djava.io.tmpdir={work}", **conf},
)
spark = indextables.configure_spark(builder).getOrCreate()
spark.sparkContext.setLogLevel("WARN")
spark.range(0, 100).write.format("indextables").save(f"{work}/warm-up")
print("READY", flush=True)
go, deadline = Path(work) / "go", time.monotonic() + 300
while not go.exists():
    if time.monotonic() > deadline:
        sys.exit("nobody said go")
    time.sleep(0.01)
print("RUNNING", flush=True)
"""


def wait_until(done: Callable[[], bool], what: str, timeout: float = PATIENCE_S) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.01)


def group_alive(pgid: int) -> list[int]:
    """The processes of a process group that are not yet dead (zombies count as dead)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, _ppid, group = stat.rsplit(")", 1)[1].split()[:3]
        if int(group) == pgid and state != "Z":
            alive.append(int(entry.name))
    return alive


class KilledDriver:
    """`body` run in a driver process of its own, in the folder `work` (created here), with
    `args` (strings) and the session settings `conf`; see the module's comment."""

    def __init__(
        self, work: Path, body: str, args: list[str], conf: dict[str, str] | None = None
    ) -> None:
        self.work = work
        work.mkdir()
        script = work / "driver.py"
        script.write_text(_SCRIPT + body + '\nprint("DONE", flush=True)\n')
        self.out = work / "out.txt"
        command = [sys.executable, str(script), str(TESTS_DIR), str(work), json.dumps(conf or {})]
        with self.out.open("wb") as sink:
            self.proc = subprocess.Popen(
                [*command, *args], stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
            )

    def said(self, word: str) -> bool:
        """Whether the driver printed `word`; fails if it ended without being killed."""
        if self.proc.poll() is not None:
            text = self.out.read_text(errors="replace")
            raise AssertionError(f"the driver ended ({self.proc.returncode}) unkilled:\n{text}")
        return word in self.out.read_text(errors="replace")

    def run_until(self, moment: Callable[[], bool], what: str) -> None:
        """Waits for the driver to be ready, lets it run `body`, and SIGKILLs it once `moment()`
        holds; returns when none of its processes runs."""
        wait_until(lambda: self.said("READY"), "the driver's session to start")
        (self.work / "go").touch()
        wait_until(lambda: self.said("RUNNING"), "the driver to start")
        wait_until(lambda: self.said("RUNNING") and moment(), what)
        self.kill()
        assert self.proc.returncode == -signal.SIGKILL, self.out.read_text()
        assert "DONE" not in self.out.read_text()

    def kill(self) -> None:
        """SIGKILLs the process group and waits until none of its processes runs."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=PATIENCE_S)
        wait_until(lambda: not group_alive(self.proc.pid), "the killed driver's processes")
