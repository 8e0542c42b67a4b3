#!/usr/bin/env python3
"""Which package of the plugin's Scala and Java sources uses which, and the cycles between them.

A package is a top-level package under io.indextables.spark (io.indextables.spark.transaction.state
belongs to `transaction`); files directly in io.indextables.spark form `(root)`, files in
org.apache.spark.sql.indextables form `spark-bridge`, and files in other packages under
io.indextables (upstream IndexTables' class names, such as
io.indextables.provider.IndexTablesProvider, kept as thin subclasses of ours) form
`upstream-aliases`. A file's package comes from its package
clauses, chained ones included (`package io.indextables.spark` then `package transaction`).

A file depends on a package when its code names it, comments and string literals aside:
- absolute paths, in imports or in code: io.indextables.spark.read.Foo, _root_.io..., import
  io.indextables.spark.{read, write}, import org.apache.spark.sql.indextables.SparkFilterBridge;
- relative paths, resolved against the packages its package clauses open (innermost first) and
  its wildcard imports: in `package io.indextables.spark` + `package transaction`, `read.Foo`
  and `IndexTablesErrors` name io.indextables.spark.read.Foo and the root's IndexTablesErrors.
  A relative path counts only when it names a package followed by a type or object declared in
  it (or `_` or `{...}` in an import), so a local `val schema` is not the `schema` package. With a
  single clause (`package io.indextables.spark.read`) nothing of the parents is visible, so only
  absolute paths and imports count, as in Scala.

Prints one line per package, `<pkg> -> <deps>`, then `no cycles` or, for each strongly connected
component of more than one package, `component: a, b, c` and a shortest cycle through each of its
packages: `cycle: a -> b -> a`. Exits 0 without cycles, 1 with cycles, 2 on a bad argument.
Dependency-free (Python 3.9+); from the repository root:

    python3 build/package_graph.py             # jvm/src/main/scala and /java of this repository
    python3 build/package_graph.py --why       # and the first file:line behind each dependency
    python3 build/package_graph.py --json      # {"packages": {pkg: [deps]}, "components": [...],
                                               #  "cycles": [[a, b, a], ...]}
    python3 build/package_graph.py --root DIR  # other sources roots (repeat --root for more)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT_PKG = "io.indextables.spark"
BRIDGE_PKG = "org.apache.spark.sql.indextables"
ALIASES_PKG = "io.indextables"
ROOT_NAME = "(root)"
BRIDGE_NAME = "spark-bridge"
ALIASES_NAME = "upstream-aliases"
_MAIN = Path(__file__).resolve().parent.parent / "jvm" / "src" / "main"
DEFAULT_SOURCES = [_MAIN / "scala", _MAIN / "java"]

_IDENT = r"[A-Za-z_$][\w$]*"
_CLAUSE = re.compile(rf"\s*package\s+(?!object\b)({_IDENT}(?:\.{_IDENT})*)\s*([{{;]?)")
_DEFINITION = re.compile(rf"[{{}}]|\b(?:class|trait|object)\s+({_IDENT})")
# A path: identifiers joined by dots, the last part may be an import selector group {A, B => C}.
_PATH = re.compile(rf"(?<![\w$.])({_IDENT}(?:\.(?:{_IDENT}|\{{[^}}]*\}}))*)")
_IMPORT = re.compile(r"\bimport\s+((?:[^\n;{]|\{[^}]*\})+)")


# ---------------------------------------------------------------------------------------------
# Comments and string literals


def _blank(text: str) -> str:
    return "".join(c if c == "\n" else " " for c in text)


def _comment_end(src: str, i: int) -> int:
    """End of the (nestable, as in Scala) block comment starting at i."""
    depth = 0
    while i < len(src):
        if src.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif src.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return len(src)


def _scan_string(src: str, i: int, out: list[str], interpolated: bool) -> int:
    """Blanks the string literal starting at i, keeping the code of ${...} splices."""
    triple = src.startswith('"""', i)
    out.append(" " * (3 if triple else 1))
    i += 3 if triple else 1
    while i < len(src):
        if triple and src.startswith('"""', i):
            end = i + 3
            while end < len(src) and src[end] == '"':
                end += 1
            out.append(" " * (end - i))
            return end
        c = src[i]
        if not triple and c in '"\n':
            out.append(_blank(c))
            return i + 1
        if not triple and c == "\\":
            out.append(_blank(src[i : i + 2]))
            i += 2
        elif interpolated and src.startswith("${", i):
            out.append("  ")
            i = _scan_code(src, i + 2, out, splice=True)
            if i < len(src):
                out.append(" ")
                i += 1
        elif interpolated and src.startswith("$$", i):
            out.append("  ")
            i += 2
        else:
            out.append(_blank(c))
            i += 1
    return i


def _scan_code(src: str, i: int, out: list[str], splice: bool) -> int:
    """Copies code from i, blanking comments and literals; in a splice, stops at its `}`."""
    depth = 0
    while i < len(src):
        c = src[i]
        if src.startswith("//", i):
            end = src.find("\n", i)
            end = len(src) if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif src.startswith("/*", i):
            end = _comment_end(src, i)
            out.append(_blank(src[i:end]))
            i = end
        elif c == '"':
            interpolated = i > 0 and (src[i - 1].isalnum() or src[i - 1] in "_$")
            i = _scan_string(src, i, out, interpolated)
        elif c == "'" and (src[i + 1 : i + 2] == "\\" or src[i + 2 : i + 3] == "'"):
            end = src.find("'", i + 3) + 1 if src[i + 1] == "\\" else i + 3
            end = len(src) if end <= 0 else end
            out.append(_blank(src[i:end]))  # a character literal such as '"' or '\''
            i = end
        elif c == "`":
            end = src.find("`", i + 1) + 1 or len(src)
            out.append(src[i:end])
            i = end
        else:
            if splice and c == "{":
                depth += 1
            elif splice and c == "}":
                if depth == 0:
                    return i
                depth -= 1
            out.append(c)
            i += 1
    return i


def strip_comments_and_strings(src: str) -> str:
    """The source with comments and string/character literals blanked; offsets are kept."""
    out: list[str] = []
    _scan_code(src, 0, out, splice=False)
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Source files


@dataclass
class SourceFile:
    path: Path
    code: str  # comments and literals blanked
    opened: list[str]  # the packages the package clauses open, outermost first
    body: int  # offset where the code after the package clauses starts
    definitions: set[str]  # top-level classes, traits and objects

    @property
    def package(self) -> str:
        return self.opened[-1] if self.opened else ""

    def line(self, offset: int) -> int:
        return self.code.count("\n", 0, offset) + 1


def read_source(path: Path) -> SourceFile:
    code = strip_comments_and_strings(path.read_text(encoding="utf-8"))
    opened: list[str] = []
    pos = braces = 0
    while (m := _CLAUSE.match(code, pos)) is not None:
        opened.append(f"{opened[-1]}.{m[1]}" if opened else m[1])
        braces += m[2] == "{"
        pos = m.end()
    definitions: set[str] = set()
    depth = 0
    for m in _DEFINITION.finditer(code, pos):
        if m[0] == "{":
            depth += 1
        elif m[0] == "}":
            depth -= 1
        elif depth == braces:
            definitions.add(m[1])
    return SourceFile(path, code, opened, pos, definitions)


def top_level(package: str) -> str | None:
    """The graph node of a full package name, None outside the plugin."""
    if package == BRIDGE_PKG or package.startswith(BRIDGE_PKG + "."):
        return BRIDGE_NAME
    if package == ROOT_PKG:
        return ROOT_NAME
    if package.startswith(ROOT_PKG + "."):
        return package[len(ROOT_PKG) + 1 :].split(".")[0]
    if package.startswith(ALIASES_PKG + "."):
        return ALIASES_NAME
    return None


@dataclass
class Index:
    """The packages declared in the tree (with their parents) and what each declares."""

    packages: set[str] = field(default_factory=set)
    members: dict[str, set[str]] = field(default_factory=dict)

    def add(self, source: SourceFile) -> None:
        parts = source.package.split(".") if source.package else []
        for n in range(1, len(parts) + 1):
            self.packages.add(".".join(parts[:n]))
            if n > 1:
                self.members.setdefault(".".join(parts[: n - 1]), set()).add(parts[n - 1])
        self.members.setdefault(source.package, set()).update(source.definitions)

    def walk(self, start: str, segments: list[str], relative: bool) -> list[str]:
        """The packages a path names, read from package `start` ("" for an absolute path).

        A relative path must go on past its last package with something declared there (or an
        import's `_` or `{...}`); an absolute one needs nothing after.
        """
        package, i = start, 0
        while i < len(segments) and _join(package, segments[i]) in self.packages:
            package, i = _join(package, segments[i]), i + 1
        if i == len(segments):
            return [package] if package and not relative else []
        rest = segments[i]
        if rest.startswith("{"):
            names = [s.split("=>")[0].strip() for s in rest[1:-1].split(",")]
            return [_join(package, n) if _join(package, n) in self.packages else package
                    for n in names if n]  # fmt: skip
        if package and (not relative or rest == "_" or rest in self.members.get(package, ())):
            return [package]
        return []


def _join(package: str, name: str) -> str:
    return f"{package}.{name}" if package else name


def _split_path(path: str) -> list[str]:
    head, brace, selectors = path.partition("{")
    segments = [s for s in head.split(".") if s]
    return [*segments, brace + selectors] if brace else segments


def _top_level_comma_split(text: str) -> list[str]:
    parts: list[str] = []
    depth = start = 0
    for i, c in enumerate(text):
        depth += (c == "{") - (c == "}")
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _opening(name: str, visible: list[str], index: Index) -> str | None:
    """The innermost visible package in which `name` is a package or a declared member."""
    for package in visible:
        if _join(package, name) in index.packages or name in index.members.get(package, ()):
            return package
    return None


def references(source: SourceFile, index: Index) -> Iterable[tuple[str, int]]:
    """(full package name, offset) for every reference of the file to a package of the tree."""
    roots = {p for p in index.packages if "." not in p}
    visible = list(reversed(source.opened))  # innermost first
    shadowed = set(source.definitions)  # names the file binds itself hide outer packages' names
    for m in _IMPORT.finditer(source.code, source.body):
        for clause in _top_level_comma_split(m[1]):
            segments = _split_path("".join(clause.split()))
            segments = segments[1:] if segments[:1] == ["_root_"] else segments
            if not segments:
                continue
            last = segments[-1]
            selectors = [s.strip() for s in last[1:-1].split(",")] if last[0] == "{" else [last]
            prefix = ".".join(segments[:-1])
            if "_" in selectors and prefix in index.packages and prefix not in visible:
                visible.append(prefix)  # an absolute wildcard import opens a package of the tree
            shadowed.update(s.split("=>")[-1].strip() for s in selectors if s != "_")
    for m in _PATH.finditer(source.code, source.body):
        segments = _split_path(m[1])
        first = segments[0]
        opening = None if first in shadowed else _opening(first, visible, index)
        if first == "_root_":
            found = index.walk("", segments[1:], relative=False)
        elif opening is not None:
            found = index.walk(opening, segments, relative=True)
        elif first in roots:
            found = index.walk("", segments, relative=False)
        else:
            continue
        for package in found:
            yield package, m.start()


# ---------------------------------------------------------------------------------------------
# Graph and cycles

Graph = dict[str, set[str]]
Evidence = dict[tuple[str, str], dict[str, int]]  # (package, dep) -> {file: first line}


def build_graph(sources_roots: list[Path]) -> tuple[Graph, Evidence]:
    found = [(root, p) for root in sources_roots for ext in ("*.scala", "*.java")
             for p in sorted(root.rglob(ext))]  # fmt: skip
    roots = {p: root for root, p in found}
    sources = [read_source(p) for _, p in found]
    index = Index()
    graph: Graph = {}
    for source in sources:
        node = top_level(source.package)
        if node is None:
            print(f"note: {source.path}: package '{source.package}' ignored", file=sys.stderr)
            continue
        index.add(source)
        graph.setdefault(node, set())
    evidence: Evidence = {}
    for source in sources:
        node = top_level(source.package)
        if node is None:
            continue
        for package, offset in references(source, index):
            dep = top_level(package)
            if dep is not None and dep != node:
                graph[node].add(dep)
                graph.setdefault(dep, set())
                files = evidence.setdefault((node, dep), {})
                where = str(source.path.relative_to(roots[source.path]))
                files.setdefault(where, source.line(offset))
    return graph, evidence


def components(graph: Graph) -> list[list[str]]:
    """Strongly connected components (Tarjan), each sorted."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for dep in sorted(graph[node]):
            if dep not in order:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], order[dep])
        if low[node] == order[node]:
            component: list[str] = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            found.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return found


def shortest_cycle(graph: Graph, start: str, inside: set[str]) -> list[str]:
    """A shortest cycle from start back to it through packages of `inside` (breadth first)."""
    parents: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if start in graph[node]:
            path = [node]
            while path[-1] != start:
                path.append(parents[path[-1]])
            return [*reversed(path), start]
        for dep in sorted(graph[node] & inside):
            if dep not in parents and dep != start:
                parents[dep] = node
                queue.append(dep)
    return []


def cycles(graph: Graph) -> list[tuple[list[str], list[list[str]]]]:
    """Each component of more than one package, with a shortest cycle through each of its
    packages (the same cycle once, written from its first package in sorted order)."""
    found = []
    for component in components(graph):
        if len(component) < 2:
            continue
        distinct = set()
        for start in component:
            ring = shortest_cycle(graph, start, set(component))[:-1]
            first = ring.index(min(ring))
            distinct.add(tuple(ring[first:] + ring[:first] + [ring[first]]))
        found.append((component, sorted(list(c) for c in distinct)))
    return sorted(found)


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, action="append",
                        help="a main sources root, Scala and Java (default: jvm/src/main/scala "
                             "and jvm/src/main/java); repeat for more")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the graph and cycles as JSON")
    parser.add_argument("--why", action="store_true", help="list file:line behind each dependency")
    args = parser.parse_args(argv)
    roots: list[Path] = args.root or DEFAULT_SOURCES
    for root in roots:
        if not root.is_dir():
            print(f"error: {root} is not a directory", file=sys.stderr)
            return 2
    graph, evidence = build_graph(roots)
    found = cycles(graph)
    if args.json:
        print(json.dumps({"packages": {p: sorted(graph[p]) for p in sorted(graph)},
                          "components": [component for component, _ in found],
                          "cycles": [c for _, cs in found for c in cs]}, indent=2))  # fmt: skip
    else:
        for package in sorted(graph):
            print(f"{package} -> {', '.join(sorted(graph[package]))}".rstrip())
            if args.why:
                for dep in sorted(graph[package]):
                    files = sorted(evidence[package, dep].items())
                    print(f"    {dep}: " + ", ".join(f"{path}:{line}" for path, line in files))
        for component, component_cycles in found:
            print("component: " + ", ".join(component))
            for cycle in component_cycles:
                print("cycle: " + " -> ".join(cycle))
        if not found:
            print("no cycles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
