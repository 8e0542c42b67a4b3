"""Python exceptions for errors the IndexTables plugin raises on the JVM side."""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["IndexTablesError", "convert_exception"]

_JVM_PACKAGE: Final[str] = "io.indextables.spark"

# Every IndexTables message starts with its error class in brackets, as Spark's own errors do.
_ERROR_CLASS: Final[re.Pattern[str]] = re.compile(r"\[(INDEXTABLES_[A-Z0-9_]+)\]")


class IndexTablesError(Exception):
    """An error raised by IndexTables, carrying the JVM exception's message unchanged.

    `error_class` is the stable name of the error (such as ``INDEXTABLES_TABLE_NOT_FOUND`` or
    ``INDEXTABLES_CONCURRENT_COMMIT``): match on it rather than on the message.
    """

    def __init__(
        self, message: str, java_class: str | None = None, error_class: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.java_class = java_class
        """Fully qualified name of the JVM exception class, when known."""
        self.error_class = error_class if error_class is not None else _error_class_in(message)
        """The stable error class, when known."""


def convert_exception(error: BaseException) -> BaseException:
    """Return an IndexTablesError for a py4j or PySpark exception that IndexTables raised.

    An exception counts as ours when a JVM throwable in its cause chain is of a class under
    `io.indextables.spark` (its message is kept), or when its message names that package.
    Anything else is returned unchanged, so callers can write `raise convert_exception(e) from e`.
    """
    if isinstance(error, IndexTablesError):
        return error
    throwable = _java_throwable(error)
    seen = 0
    while throwable is not None and seen < 20:
        name = str(throwable.getClass().getName())
        if name.startswith(_JVM_PACKAGE):
            return IndexTablesError(
                str(throwable.getMessage()),
                java_class=name,
                error_class=_jvm_error_class(throwable),
            )
        throwable = throwable.getCause()
        seen += 1
    message = str(error)
    if _JVM_PACKAGE in message:
        return IndexTablesError(message)
    return error


def _java_throwable(error: BaseException) -> Any:
    """The JVM throwable behind a Py4JJavaError or a PySpark CapturedException, if any."""
    for attr in ("java_exception", "_origin"):
        throwable = getattr(error, attr, None)
        if throwable is not None and hasattr(throwable, "getClass"):
            return throwable
    return None


def _jvm_error_class(throwable: Any) -> str | None:
    """The error class the JVM exception reports (`getErrorClass`), if it has one."""
    try:
        value = throwable.getErrorClass()
    except Exception:  # noqa: BLE001 (a throwable without the method, or a handle that is gone)
        return None
    return str(value) if value is not None else None


def _error_class_in(message: str) -> str | None:
    match = _ERROR_CLASS.search(message)
    return match.group(1) if match else None
