"""Python exceptions for errors the IndexTables plugin raises on the JVM side."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["IndexTablesError", "convert_exception"]

_JVM_PACKAGE: Final[str] = "io.indextables.spark"


class IndexTablesError(Exception):
    """An error raised by IndexTables, carrying the JVM exception's message unchanged."""

    def __init__(self, message: str, java_class: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.java_class = java_class
        """Fully qualified name of the JVM exception class, when known."""


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
            return IndexTablesError(str(throwable.getMessage()), java_class=name)
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
