"""A seeded generator of random predicate trees over the logs_df columns.

Each predicate is a (description, Column) pair; the description is a readable SQL-like form for
failure messages. Values are drawn from the data itself (plus a few absent ones), so most leaves
match something; message needles include whole words, fragments, case variants and phrases.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Union

from pyspark.sql import Column
from pyspark.sql import functions as F

__all__ = ["Predicate", "generate_predicates"]

_COLS = (
    "id", "ts", "day", "level", "component", "host", "latency_ms", "status", "ok", "message"
)  # fmt: skip
_ORDERED = {"id", "ts", "day", "latency_ms", "status", "level", "host", "component"}

# A value of one of the columns above, as a predicate literal (dt.datetime is a dt.date).
Value = Union[bool, int, float, str, dt.date]


def _value(x: object) -> Value:
    if isinstance(x, (bool, int, float, str, dt.date)):
        return x
    raise TypeError(f"no predicate literal for a {type(x).__name__}: {x!r}")


def _in_order(a: Value, b: Value) -> tuple[Value, Value]:
    """Two values of one column, the smaller first (as sorted() puts them; both compare)."""
    if isinstance(a, str) and isinstance(b, str):
        return (b, a) if b < a else (a, b)
    if isinstance(a, dt.date) and isinstance(b, dt.date):
        return (b, a) if b < a else (a, b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return (b, a) if b < a else (a, b)
    raise TypeError(f"values of different types: {a!r}, {b!r}")


@dataclass(frozen=True)
class Predicate:
    description: str
    column: Column


class _Generator:
    def __init__(self, rows: Sequence[tuple[object, ...]], seed: int) -> None:
        self.rng = random.Random(seed)
        self.values = {
            name: [_value(r[i]) for r in rows if r[i] is not None] for i, name in enumerate(_COLS)
        }
        messages = self.values["message"]
        self.words = sorted({w for m in messages[:3000] for w in str(m).split() if len(w) > 1})

    def value(self, col: str) -> Value:
        rng = self.rng
        if col == "id":
            return rng.randint(-5, len(self.values["id"]) + 5)
        if col == "level" and rng.random() < 0.15:
            return rng.choice(["FATAL", "info", "Error"])
        if col in ("latency_ms",) and rng.random() < 0.3:
            return round(rng.uniform(0, 200), 1)
        if col == "day" and rng.random() < 0.1:
            return dt.date(2023, 1, 1)
        return rng.choice(self.values[col])

    def needle(self) -> str:
        rng = self.rng
        message = str(rng.choice(self.values["message"]))
        word = rng.choice(self.words)
        kind = rng.randrange(7)
        if kind == 0:
            return word
        if kind == 1 and len(word) > 3:
            start = rng.randrange(len(word) - 2)
            return word[start : start + rng.randint(2, len(word) - start)]
        if kind == 2:
            return rng.choice([word.upper(), word.lower(), word.capitalize()])
        if kind == 3:
            tokens = message.split()
            if len(tokens) >= 2:
                i = rng.randrange(len(tokens) - 1)
                return " ".join(tokens[i : i + 2])
        if kind == 4:
            return rng.choice(["timeout", "error", "failed", "blk_", "[", "=", " ", "Connection"])
        if kind == 5:
            return message[: rng.randint(1, max(1, min(len(message), 12)))] or word
        return rng.choice(["zzzqqq", "no-such-token", word + "zz"])

    def leaf(self) -> Predicate:
        rng = self.rng
        col = rng.choice(_COLS)
        c = F.col(col)
        op = rng.random()
        if op < 0.08:
            return Predicate(f"{col} IS NULL", c.isNull())
        if op < 0.14:
            return Predicate(f"{col} IS NOT NULL", c.isNotNull())
        if col == "ok":
            flag = rng.choice([True, False])
            return Predicate(f"ok = {flag}", c == flag)
        if col in ("message", "component", "host") and op < 0.55:
            if rng.random() < 0.65:
                s = self.needle() if col == "message" else self._fragment(col)
                return Predicate(f"{col} CONTAINS {s!r}", c.contains(s))
            full = str(self.value(col))
            s = full[: rng.randint(1, max(1, min(len(full), 15)))]
            return Predicate(f"{col} STARTSWITH {s!r}", c.startswith(s))
        kind = rng.randrange(9 if col in _ORDERED else 3)
        if kind == 0:
            v = self.value(col)
            return Predicate(f"{col} = {v!r}", c == v)
        if kind == 1:
            v = self.value(col)
            return Predicate(f"{col} != {v!r}", c != v)
        if kind == 2:
            vs = [self.value(col) for _ in range(rng.randint(1, 4))]
            return Predicate(f"{col} IN {vs!r}", c.isin(*vs))
        if kind == 3:
            a, b = _in_order(self.value(col), self.value(col))
            return Predicate(f"{col} BETWEEN {a!r} AND {b!r}", c.between(a, b))
        v = self.value(col)
        comparisons: list[tuple[str, Callable[[Value], Column]]] = [
            ("<", lambda x: c < x),
            ("<=", lambda x: c <= x),
            (">", lambda x: c > x),
            (">=", lambda x: c >= x),
        ]
        op_name, fn = rng.choice(comparisons)
        return Predicate(f"{col} {op_name} {v!r}", fn(v))

    def _fragment(self, col: str) -> str:
        v = str(self.value(col))
        start = self.rng.randrange(len(v))
        return v[start : start + self.rng.randint(1, 6)]

    def tree(self, depth: int) -> Predicate:
        rng = self.rng
        if depth == 0 or rng.random() < 0.35:
            return self.leaf()
        kind = rng.random()
        if kind < 0.2:
            inner = self.tree(depth - 1)
            return Predicate(f"NOT ({inner.description})", ~inner.column)
        left, right = self.tree(depth - 1), self.tree(depth - 1)
        if kind < 0.6:
            return Predicate(
                f"({left.description}) AND ({right.description})", left.column & right.column
            )
        return Predicate(
            f"({left.description}) OR ({right.description})", left.column | right.column
        )


def generate_predicates(
    rows: Sequence[tuple[object, ...]], count: int, seed: int = 7, max_depth: int = 3
) -> list[Predicate]:
    """`count` predicate trees of depth <= max_depth, the same for the same rows and seed."""
    generator = _Generator(rows, seed)
    return [generator.tree(max_depth) for _ in range(count)]
