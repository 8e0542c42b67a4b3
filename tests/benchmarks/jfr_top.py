"""Where the time goes in a JFR recording (run.py --jfr writes driver.jfr and harness.jfr).

    .venv/bin/python tests/benchmarks/jfr_top.py target/bench/driver.jfr [--thread "Executor task"]

Counts execution samples (Java frames) and native-method samples (threads inside JNI calls,
e.g. tantivy4java) by top frame and by "inclusive" frame (anywhere on the stack), for the
threads whose name contains --thread (default: every thread).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from collections import Counter
from typing import Any


def frames(event: dict[str, Any]) -> list[str]:
    st = (event.get("values") or {}).get("stackTrace") or {}
    out = []
    for f in st.get("frames") or []:
        m = f.get("method") or {}
        t = (m.get("type") or {}).get("name", "?")
        out.append(f"{t}.{m.get('name', '?')}")
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("recording")
    p.add_argument("--thread", default="")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--within", default="", help="only samples with a frame containing this")
    a = p.parse_args()
    jfr = shutil.which("jfr") or "jfr"
    raw = subprocess.run(
        [jfr, "print", "--json", "--stack-depth", "64", "--events",
         "jdk.ExecutionSample,jdk.NativeMethodSample", a.recording],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    events = json.loads(raw)["recording"]["events"]
    top: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    n = 0
    for e in events:
        thread = ((e.get("values") or {}).get("sampledThread") or {}).get("javaName") or ""
        if a.thread not in thread:
            continue
        fs = frames(e)
        if not fs or (a.within and not any(a.within in f for f in fs)):
            continue
        n += 1
        kind = "native" if e["type"] == "jdk.NativeMethodSample" else "java"
        top[f"[{kind}] {fs[0]}"] += 1
        for f in set(fs):
            incl[f] += 1
    print(f"{n} samples on threads matching {a.thread!r}, within {a.within!r}\n\nTop frames:")
    for f, c in top.most_common(a.top):
        print(f"  {100 * c / n:5.1f}%  {f}")
    print("\nInclusive (io.indextables / tantivy4java / spark frames):")
    shown = 0
    for f, c in incl.most_common():
        if any(k in f for k in ("indextables", "tantivy4java", "spark.sql", "spark.rdd")):
            print(f"  {100 * c / n:5.1f}%  {f}")
            shown += 1
            if shown >= a.top:
                break


if __name__ == "__main__":
    main()
