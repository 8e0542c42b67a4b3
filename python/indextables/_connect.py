"""What tells a Spark Connect object from a classic one, where PySpark 3.5 keeps two classes."""

from __future__ import annotations

import importlib


def is_classic_or_connect(value: object, classic: type, connect_module: str) -> bool:
    """Whether `value` is a `classic`, or the class of the same name in `connect_module` (which
    PySpark's Connect client defines apart, and which is absent without that client)."""
    if isinstance(value, classic):
        return True
    try:
        connect = getattr(importlib.import_module(connect_module), classic.__name__)
    except Exception:  # noqa: BLE001 (no Connect client installed)
        return False
    return isinstance(value, connect)
