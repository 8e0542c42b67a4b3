"""Delta Lake 3.3.2 as the oracle of row-level statements: the same rows, the same statements.

Issue 30 asks that every answer of DELETE, UPDATE and MERGE INTO on an IndexTables table equal
Delta Lake's (delta-spark 3.3.2) on the same rows. Delta runs in the suite's own session, beside
the plugin: build/package.sh copies delta-spark and delta-storage to target/oracle-jars (sbt
`bench/oracleJars`, from the bench project's resolution), and `configure` adds them, Delta's
session extension (after ours, so our parser sees statements first) and Delta's catalog under
the name `delta_oracle`. The session catalog stays ours (`spark_catalog`); Delta's catalog,
registered under another name, is handed the session catalog as its delegate on first use
(Spark does that for `spark_catalog` only), and then resolves path tables,
`delta_oracle.delta.`/path``, on which Delta's SQL works as on any Delta table.

A test makes a `DeltaTable` of the same rows as its IndexTables table and runs the same
statement text on both, `{table}` standing for the table:

    delta = DeltaTable.create(spark, str(tmp_path / "delta"), rows)
    (counts,) = delta.sql("DELETE FROM {table} WHERE user = 'u3'")   # Row(num_affected_rows=..)
    assert_same_rows(read_table(spark, ours), delta.read())

Every table has deletion vectors enabled (`delta.enableDeletionVectors`), so Delta's DELETE,
UPDATE and MERGE mark rows as ours will, rather than rewrite files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyspark
from pyspark.sql import DataFrame, Row, SparkSession

__all__ = [
    "CATALOG",
    "DELTA_EXTENSION",
    "ORACLE_JARS_DIR",
    "SPARK_LINE",
    "DeltaTable",
    "configure",
    "iceberg_installed",
    "is_installed",
    "oracle_jars",
    "s3a_installed",
]

SPARK_LINE = ".".join(pyspark.__version__.split(".")[:2])
"""The Spark line of the installed PySpark ("3.5", "4.0", "4.1", "4.2"): the oracles' JARs are
built for it."""

_JARS = Path(__file__).resolve().parent.parent / "target"
# Per Spark line: where build/package.sh puts the oracles' JARs, Delta Lake's, Iceberg's Spark
# runtime (None: Iceberg has no runtime for the line), and Hadoop's S3A of the Hadoop the line's
# Spark ships (none on 4.1 and 4.2: the S3 test runs on 3.5). No CI run is on Spark 4.1, and
# build/package.sh fills no folder for it: put Delta 4.4's JARs for Spark 4.1
# (io.delta:delta-spark_4.1_2.13:4.4.0, delta-storage 4.4.0) and Iceberg 1.11's runtime
# (iceberg-spark-runtime-4.1_2.13) in target/oracle-jars-4.1 to run the lake tests there.
_LINES: dict[str, tuple[Path, tuple[str, ...], str | None, tuple[str, ...]]] = {
    "3.5": (
        _JARS / "oracle-jars",
        ("delta-spark_2.12-3.3.2.jar", "delta-storage-3.3.2.jar"),
        "iceberg-spark-runtime-3.5_2.12-1.10.0.jar",
        ("hadoop-aws-3.3.4.jar", "aws-java-sdk-bundle-1.12.262.jar"),
    ),
    "4.0": (
        _JARS / "oracle-jars-4.0",
        ("delta-spark_2.13-4.0.0.jar", "delta-storage-4.0.0.jar"),
        "iceberg-spark-runtime-4.0_2.13-1.10.0.jar",
        ("hadoop-aws-3.4.1.jar", "bundle-2.24.6.jar"),
    ),
    "4.1": (
        _JARS / "oracle-jars-4.1",
        ("delta-spark_4.1_2.13-4.4.0.jar", "delta-storage-4.4.0.jar"),
        "iceberg-spark-runtime-4.1_2.13-1.11.0.jar",
        (),
    ),
    "4.2": (
        _JARS / "oracle-jars-4.2",
        ("delta-spark_2.13-4.4.0.jar", "delta-storage-4.4.0.jar"),
        None,
        (),
    ),
}
ORACLE_JARS_DIR, DELTA_JARS, ICEBERG_JAR, S3A_JARS = _LINES.get(
    SPARK_LINE, (_JARS / f"oracle-jars-{SPARK_LINE}", (), None, ())
)
"""Where build/package.sh puts Delta Lake's JARs for the line (DELTA_JARS); Iceberg's Spark
runtime (ICEBERG_JAR), the maker and reader of the Iceberg tables that companion indexes are
tested over (tests/test_companion_iceberg.py); and Hadoop's S3A (S3A_JARS), how Delta keeps a
table on S3 (tests/test_companion_delta_s3.py), of the Hadoop the line's Spark ships."""
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG_CLASS = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
CATALOG = "delta_oracle"
# The Spark catalog name of the tests' Iceberg warehouse (conftest's `ice` fixture).
ICEBERG_CATALOG = "ice"
"""The name Delta's catalog is registered under (the session catalog stays the plugin's)."""

# Delta's settings for a small local suite, none of which changes an answer: its log replay and
# state reconstruction run in as many tasks as snapshotPartitions (50 by default: 50 tasks for a
# table of a few files, tens of seconds per statement on two cores), and the checksum file of
# each version costs a state reconstruction after every commit.
DELTA_SETTINGS = {
    f"spark.sql.catalog.{CATALOG}": DELTA_CATALOG_CLASS,
    "spark.databricks.delta.snapshotPartitions": "1",
    "spark.databricks.delta.writeChecksumFile.enabled": "false",
}


def oracle_jars() -> list[Path]:
    """Delta Lake's JARs, and Iceberg's where the line has a runtime; fails, saying how to get
    them, when absent."""
    iceberg = [ICEBERG_JAR] if ICEBERG_JAR else []
    return _present([ORACLE_JARS_DIR / name for name in (*DELTA_JARS, *iceberg)])


def s3a_jars() -> list[Path]:
    """Hadoop's S3A JARs (not on the suite's session's class path: only a process of its own
    that keeps a Delta table on S3 takes them)."""
    return _present([ORACLE_JARS_DIR / name for name in S3A_JARS])


def _present(jars: list[Path]) -> list[Path]:
    missing = [str(j) for j in jars if not j.is_file()]
    if missing:
        raise FileNotFoundError(
            f"the Delta Lake oracle's JARs are missing ({', '.join(missing)}): "
            "build/package.sh copies them there (sbt bench/oracleJars)"
        )
    return jars


def _all_present(names: tuple[str, ...]) -> bool:
    return bool(names) and all((ORACLE_JARS_DIR / name).is_file() for name in names)


def is_installed() -> bool:
    """Whether build/package.sh has put Delta Lake's JARs for this Spark line in place."""
    return _all_present(DELTA_JARS)


def iceberg_installed() -> bool:
    """Whether Iceberg's Spark runtime for this Spark line is in place (there is none for 4.2)."""
    return ICEBERG_JAR is not None and _all_present((ICEBERG_JAR,))


def s3a_installed() -> bool:
    """Whether Hadoop's S3A JARs for this Spark line are in place, beside Delta's."""
    return is_installed() and _all_present(S3A_JARS)


def _append(existing: object, values: list[str]) -> str:
    items = [i.strip() for i in str(existing or "").split(",") if i.strip()]
    return ",".join(items + [v for v in values if v not in items])


def configure(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add Delta Lake to a builder that `indextables.configure_spark` configured already: its
    JARs to the driver's class path (not `spark.jars`, which a page's own
    `configure_spark(...).getOrCreate()` must find unchanged: it is a static setting), its
    extension after ours, its catalog as `delta_oracle`."""
    options: dict[str, Any] = getattr(builder, "_options", {})
    jars = [str(j) for j in oracle_jars()]
    classpath = options.get("spark.driver.extraClassPath")
    builder = builder.config(
        "spark.driver.extraClassPath", ":".join(([str(classpath)] if classpath else []) + jars)
    )
    extensions = _append(options.get("spark.sql.extensions"), [DELTA_EXTENSION])
    builder = builder.config("spark.sql.extensions", extensions)
    for key, value in DELTA_SETTINGS.items():
        builder = builder.config(key, value)
    return builder


def _attach(spark: SparkSession) -> None:
    """Give Delta's catalog the session catalog as its delegate (idempotent). Spark hands a
    DelegatingCatalogExtension its delegate only when it is `spark_catalog`; without one, Delta's
    catalog fails every lookup with an internal error. Fails, saying why, in a session that
    `configure` did not set up."""
    if spark.conf.get(f"spark.sql.catalog.{CATALOG}", None) != DELTA_CATALOG_CLASS:
        oracle_jars()  # names the missing JARs, if that is why
        raise RuntimeError(
            f"this session has no Delta Lake oracle: build it with delta_oracle.configure "
            f"(tests/conftest.py does when {ORACLE_JARS_DIR} holds {', '.join(DELTA_JARS)})"
        )
    manager = spark._jsparkSession.sessionState().catalogManager()
    manager.catalog(CATALOG).setDelegateCatalog(manager.v2SessionCatalog())


class DeltaTable:
    """A Delta table at `path`, with deletion vectors, in the session `configure` set up.

    Statements name it `{table}`; `name` is what that stands for."""

    def __init__(self, spark: SparkSession, path: str) -> None:
        _attach(spark)
        self.spark = spark
        self.path = path
        self.name = f"{CATALOG}.delta.`{path}`"

    @classmethod
    def create(cls, spark: SparkSession, path: str, rows: DataFrame) -> DeltaTable:
        """A new Delta table of `rows`' schema with deletion vectors enabled, holding `rows`."""
        table = cls(spark, path)
        columns = ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in rows.schema.fields)
        spark.sql(
            f"CREATE TABLE {table.name} ({columns}) USING delta "
            "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
        )
        table.append(rows)
        return table

    def append(self, rows: DataFrame) -> None:
        """Append `rows` (columns matched by name)."""
        rows.write.format("delta").mode("append").save(self.path)

    def sql(self, statement: str) -> list[Row]:
        """Run `statement` with `{table}` standing for this table; its result rows (Delta's
        DELETE and UPDATE give num_affected_rows; MERGE also num_updated_rows,
        num_deleted_rows and num_inserted_rows)."""
        return self.spark.sql(statement.replace("{table}", self.name)).collect()

    def read(self) -> DataFrame:
        """The table's current rows."""
        return self.spark.read.format("delta").load(self.path)

    def last_operation(self) -> tuple[str, dict[str, str]]:
        """The latest commit's operation and its metrics, as DESCRIBE HISTORY shows them."""
        (last,) = self.sql("DESCRIBE HISTORY {table} LIMIT 1")
        return str(last.operation), dict(last.operationMetrics or {})

    @staticmethod
    def deletion_vectors_in(metrics: dict[str, str]) -> int:
        """How many deletion vectors a commit with these metrics wrote (DELETE and UPDATE name
        the metric numDeletionVectorsAdded, MERGE numTargetDeletionVectorsAdded)."""
        keys = ("numDeletionVectorsAdded", "numTargetDeletionVectorsAdded")
        found = [int(metrics[k]) for k in keys if k in metrics]
        if not found:
            raise AssertionError(f"the commit reports no deletion vectors: {metrics}")
        return sum(found)
