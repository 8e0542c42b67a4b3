"""The package structure of the Scala sources: no cycles between the plugin's top-level packages.

build/package_graph.py derives what each package uses from the main sources; the checker itself
is tested on small synthetic source trees. No Spark session and no JAR are needed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPT = REPO_ROOT / "build" / "package_graph.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False
    )


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _graph(root: Path) -> dict[str, list[str]]:
    result = _run("--root", str(root), "--json")
    assert result.returncode in (0, 1), result.stdout + result.stderr
    packages: dict[str, list[str]] = json.loads(result.stdout)["packages"]
    return packages


def test_the_main_sources_have_no_cycles_between_packages() -> None:
    result = _run()
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "no cycles" in result.stdout.splitlines(), output
    assert "cycle:" not in result.stdout, output


# The layers of ARCHITECTURE.md, lowest first: a package may import only lower layers.
LAYERS: list[set[str]] = [
    {"exceptions", "util", "stats", "spark-bridge", "metrics"},
    {"(root)"},
    {"config", "rank"},
    {"storage"},
    {"transaction", "lake"},
    {"schema"},
    {"filters"},
    {"purge", "expressions"},
    {"merge"},
    {"read", "write"},
    {"core", "sync"},
    {"catalyst", "sql", "catalog"},
    {"extensions"},
    {"upstream-aliases"},
]


def test_every_package_imports_only_lower_layers() -> None:
    result = _run("--json")
    graph: dict[str, list[str]] = json.loads(result.stdout)["packages"]
    layer = {pkg: i for i, pkgs in enumerate(LAYERS) for pkg in pkgs}
    assert set(graph) == set(layer), "a package was added or removed: place it in LAYERS"
    upward = [
        f"{pkg} (layer {layer[pkg]}) -> {dep} (layer {layer[dep]})"
        for pkg, deps in graph.items()
        for dep in deps
        if layer[dep] >= layer[pkg]
    ]
    assert not upward, "imports that do not go down a layer:\n" + "\n".join(upward)


def test_config_imports_nothing_of_the_plugin_but_the_error_factory() -> None:
    # The registry and its resolver sit under every package that reads a setting: the stores and
    # the log take typed values from them, so config itself may reach neither.
    graph: dict[str, list[str]] = json.loads(_run("--json").stdout)["packages"]
    assert graph["config"] == ["(root)"], graph["config"]
    assert "config" in graph["storage"] and "config" in graph["transaction"]


def test_the_checker_reports_two_packages_that_import_each_other(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "io/indextables/spark/a/A.scala":
            "package io.indextables.spark.a\n\nimport io.indextables.spark.b.B\n\nclass A(b: B)\n",
        "io/indextables/spark/b/B.scala":
            "package io.indextables.spark.b\n\nimport io.indextables.spark.a._\n\nclass B\n"
            "object B { def make(a: A): B = new B }\n",
        "io/indextables/spark/c/C.scala": "package io.indextables.spark.c\n\nclass C\n",
    })  # fmt: skip

    result = _run("--root", str(root))

    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines == ["a -> b", "b -> a", "c ->", "component: a, b", "cycle: a -> b -> a"], lines
    data = json.loads(_run("--root", str(root), "--json").stdout)
    assert data["cycles"] == [["a", "b", "a"]]


def test_comments_and_strings_are_ignored_relative_and_qualified_names_count(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path, {
        # Only comments, ScalaDoc and strings name `read`, `search` and `write`; `schema` is a
        # local value, not the package the chained clauses make visible.
        "io/indextables/spark/util/Quiet.scala": """package io.indextables.spark
package util

// import io.indextables.spark.read.Reader
/** See [[io.indextables.spark.search.Engine]]; /* nested io.indextables.spark.write.W */ */
object Quiet {
  val a = "io.indextables.spark.read.Reader"
  val b = \"\"\"import io.indextables.spark.search._\"\"\"
  val c = s"${1 + 1} io.indextables.spark.write.W $$x"
  val q = '"'
  val schema = Seq(1); val n = schema.length  // a local, not the `schema` package
}
""",
        # A fully-qualified name in code, _root_, a splice, an import selector, the bridge.
        "io/indextables/spark/read/Reader.scala": """package io.indextables.spark.read

import org.apache.spark.sql.indextables.Bridge
import io.indextables.spark.{schema => s}

class Reader { def e = new io.indextables.spark.search.Engine }
object Reader {
  def w = _root_.io.indextables.spark.write.W
  def t = s"${io.indextables.spark.Top}"
}
""",
        # Chained clauses open io.indextables.spark: `stats.Stat`, `schema.Schema` and `Top` are
        # relative names.
        "io/indextables/spark/write/W.scala": """package io.indextables.spark
package write

import stats.Stat

object W { def s: schema.Schema = null; def t = Top }
""",
        # A wildcard import of io.indextables.spark opens it too.
        "io/indextables/spark/sql/Command.scala": """package io.indextables.spark.sql

import io.indextables.spark._

object Command { def n = stats.Stat.count }
""",
        "io/indextables/spark/stats/Stat.scala":
            "package io.indextables.spark.stats\n\nobject Stat { def count = 0 }\n",
        # A single clause opens nothing of its parents: `write.W` would not compile, `Top` is
        # the local one.
        "io/indextables/spark/search/Engine.scala": """package io.indextables.spark.search

class Engine { def top = Top; def w = write.W }
object Top
""",
        "io/indextables/spark/schema/Schema.scala":
            "package io.indextables.spark.schema\n\nclass Schema\n",
        "io/indextables/spark/Top.scala": "package io.indextables.spark\n\nobject Top\n",
        "org/apache/spark/sql/indextables/Bridge.scala":
            "package org.apache.spark.sql\npackage indextables\n\nobject Bridge\n",
    })  # fmt: skip

    assert _graph(root) == {
        "(root)": [],
        "read": ["(root)", "schema", "search", "spark-bridge", "write"],
        "schema": [],
        "search": [],
        "spark-bridge": [],
        "sql": ["(root)", "stats"],
        "stats": [],
        "util": [],
        "write": ["(root)", "schema", "stats"],
    }


MAIN_SOURCES = REPO_ROOT / "jvm" / "src" / "main"
SPARK_PACKAGE = MAIN_SOURCES / "scala" / "io" / "indextables" / "spark"
_DIRECT_THROW = re.compile(
    r"\bthrow\s+new\s+(?:java\.lang\.)?(IllegalArgumentException|IllegalStateException)\b"
)
_ERROR_CLASS_LITERAL = re.compile(r'"(INDEXTABLES_[A-Z0-9_]+)"')
_SQL_STATE_ENTRY = re.compile(r'"(INDEXTABLES_[A-Z0-9_]+)"\s*->\s*"([0-9A-Z]{5})"')


def test_no_main_source_throws_an_illegal_argument_or_state_exception_directly() -> None:
    # Every error comes from IndexTablesErrors, with an error class and a SQLSTATE.
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}"
        for path in sorted(MAIN_SOURCES.rglob("*.scala"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if _DIRECT_THROW.search(line)
    ]
    assert not found, "throw through IndexTablesErrors instead:\n" + "\n".join(found)


def test_no_main_source_checks_with_require() -> None:
    # require throws a bare IllegalArgumentException: input errors come from IndexTablesErrors,
    # broken invariants from IndexTablesErrors.internalError.
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}"
        for path in sorted(MAIN_SOURCES.rglob("*.scala"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"(?<![\w.])require\(", line)
    ]
    assert not found, "use IndexTablesErrors instead:\n" + "\n".join(found)


def test_the_direct_throw_check_sees_both_exception_types() -> None:
    assert _DIRECT_THROW.search('case x => throw new IllegalStateException(s"$x")')
    assert _DIRECT_THROW.search("throw  new java.lang.IllegalArgumentException(why)")
    assert not _DIRECT_THROW.search(
        "IndexTablesErrors.splitReadFailed(p, new IllegalStateException(w))"
    )


def test_every_error_class_of_the_factory_has_a_sql_state() -> None:
    factory = (SPARK_PACKAGE / "IndexTablesErrors.scala").read_text()
    table = (SPARK_PACKAGE / "exceptions" / "IndexTablesException.scala").read_text()
    states = dict(_SQL_STATE_ENTRY.findall(table))
    classes = set(_ERROR_CLASS_LITERAL.findall(factory))
    assert len(classes) > 50, classes
    missing = sorted(
        c for c in classes if c not in states and not c.startswith("INDEXTABLES_INDEXQUERY_")
    )
    assert not missing, "error classes without a SQLSTATE in IndexTablesException.SqlStates: " + (
        ", ".join(missing)
    )
