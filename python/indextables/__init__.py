"""IndexTables for Spark: ships the plugin JAR and configures PySpark to use it.

Importing the package installs the mapping of the plugin's JVM errors to the exceptions of
`indextables.exceptions` (see `install_exception_mapping`).
"""

from indextables._lines import CONNECT_CLIENT_LINES, SPARK_LINE_JARS, spoken
from indextables._version import __version__

try:
    import pyspark  # noqa: F401 (only whether it is installed)
except ModuleNotFoundError as missing:
    raise ModuleNotFoundError(
        f"indextables-spark {__version__} needs PySpark, and none is installed: pip install "
        f"'indextables-spark[pyspark]' (PySpark {spoken(list(SPARK_LINE_JARS))}, with its JVM), "
        f"or 'indextables-spark[pyspark-client]' for a Spark Connect client (PySpark "
        f"{spoken(list(CONNECT_CLIENT_LINES))}, Python only)",
        name="pyspark",
    ) from missing

from indextables.exceptions import (
    CommandSyntaxError,
    ConcurrentCommitError,
    CorruptTableError,
    IndexTablesError,
    InvalidOptionError,
    InvalidQueryError,
    SchemaMismatchError,
    StorageError,
    TableExistsError,
    TableNotFoundError,
    TimeTravelError,
    UnsupportedProtocolError,
    UnsupportedSparkError,
    UnsupportedTypeError,
    convert_exception,
    install_exception_mapping,
)
from indextables.session import (
    CATALOG_CLASS,
    EXTENSIONS_CLASS,
    SPARK_SETTINGS,
    configure_spark,
    connect_server_settings,
    jar_path,
)
from indextables.table import CompanionStream, IndexTable

install_exception_mapping()

__all__ = [
    "CATALOG_CLASS",
    "EXTENSIONS_CLASS",
    "CompanionStream",
    "IndexTable",
    "SPARK_SETTINGS",
    "CommandSyntaxError",
    "ConcurrentCommitError",
    "CorruptTableError",
    "IndexTablesError",
    "InvalidOptionError",
    "InvalidQueryError",
    "SchemaMismatchError",
    "StorageError",
    "TableExistsError",
    "TableNotFoundError",
    "TimeTravelError",
    "UnsupportedProtocolError",
    "UnsupportedSparkError",
    "UnsupportedTypeError",
    "__version__",
    "configure_spark",
    "connect_server_settings",
    "convert_exception",
    "install_exception_mapping",
    "jar_path",
]
