"""IndexTables for Spark: ships the plugin JAR and configures PySpark to use it."""

from indextables._version import __version__
from indextables.exceptions import IndexTablesError, convert_exception
from indextables.session import (
    CATALOG_CLASS,
    EXTENSIONS_CLASS,
    SPARK_SETTINGS,
    configure_spark,
    jar_path,
)
from indextables.table import IndexTable

__all__ = [
    "CATALOG_CLASS",
    "EXTENSIONS_CLASS",
    "IndexTable",
    "SPARK_SETTINGS",
    "IndexTablesError",
    "__version__",
    "configure_spark",
    "convert_exception",
    "jar_path",
]
