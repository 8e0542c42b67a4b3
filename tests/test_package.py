"""The pip package: the shipped JAR, the builder helper and the exception mapping."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyspark
import pytest
from pyspark import SparkContext
from pyspark.sql import SparkSession

import indextables
import indextables.session
from helpers import jvm
from indextables import IndexTablesError, convert_exception


def test_jar_path_points_at_the_shipped_assembly_of_this_version() -> None:
    path = indextables.jar_path()
    assert os.path.isabs(path)
    assert os.path.isfile(path)
    line = indextables.session.spark_line()
    assert line == ".".join(pyspark.__version__.split(".")[:2])
    scala = "" if line == "3.5" else "_2.13"
    assert Path(path).name == f"indextables-spark{scala}-assembly-{indextables.__version__}.jar"


@pytest.mark.parametrize(
    ("version", "line"),
    [
        ("3.5.0", "3.5"),
        ("3.5.9", "3.5"),
        ("4.0.0", "4.0"),
        ("4.0.1", "4.0"),
        ("4.0.2.dev0", "4.0"),
        ("4.1.0", "4.1"),
        ("4.2.1", "4.2"),
    ],
)
def test_the_jar_of_each_spark_line_is_shipped_and_chosen_by_pyspark_version(
    version: str, line: str
) -> None:
    path, why = indextables.session.jar_choice(version)
    assert Path(path).name == indextables.session.SPARK_LINE_JARS[line]
    assert os.path.isfile(path), path
    assert f"PySpark {version}" in why and f"Spark {line} line" in why
    assert indextables.jar_path(version) == path
    # Each JAR says which Spark it was built for, and which lines it serves (the Spark 4 JAR,
    # built against 4.0, serves 4.0, 4.1 and 4.2).
    from indextables.__main__ import jar_build_properties

    built = jar_build_properties(path)
    assert built["sparkVersion"].startswith("3.5." if line == "3.5" else "4.0.")
    assert line in built["servedLines"].split(",")


@pytest.mark.parametrize("version", ["3.4.1", "3.6.0", "4.3.0", "4.3.1", "5.0.0", "dev"])
def test_a_pyspark_of_no_served_line_is_refused_naming_the_versions(
    monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    with pytest.raises(indextables.session.UnsupportedSparkVersionError) as e:
        indextables.jar_path(version)
    assert f"{version} is not one of them" in str(e.value)
    assert "3.5.x, 4.0.x, 4.1.x and 4.2.x" in str(e.value)
    # configure_spark refuses it too, before any session starts.
    monkeypatch.setattr(indextables.session, "_installed_pyspark", lambda: version)
    with pytest.raises(indextables.session.UnsupportedSparkVersionError, match=version):
        indextables.configure_spark(SparkSession.builder)


def test_without_pyspark_the_import_names_both_extras() -> None:
    # PySpark is an extra (`pyspark` or `pyspark-client`), so a bare install has none.
    hidden = "import sys; sys.modules['pyspark'] = None; import indextables"
    run = subprocess.run([sys.executable, "-c", hidden], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: indextables-spark "), last
    assert "'indextables-spark[pyspark]'" in last and "'indextables-spark[pyspark-client]'" in last
    # The lines named are those the package ships JARs for, and the client's are 4.x only.
    lines = list(indextables.session.SPARK_LINE_JARS)
    assert f"(PySpark {', '.join(lines[:-1])} or {lines[-1]}, with its JVM)" in last, last
    clients = [x for x in lines if x.startswith("4.")]
    assert f"(PySpark {', '.join(clients[:-1])} or {clients[-1]}, Python only)" in last, last


def test_jar_path_names_where_it_looked_when_the_jar_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(indextables.session, "_JARS_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        indextables.jar_path()


@pytest.mark.parametrize("not_a_builder", [None, "local[2]", {"spark.jars": "x.jar"}])
def test_configure_spark_rejects_a_non_builder(not_a_builder: Any) -> None:
    with pytest.raises(TypeError, match="SparkSession.Builder"):
        indextables.configure_spark(not_a_builder)


def test_configure_spark_appends_the_jar_once_and_starts_no_session() -> None:
    active_before = SparkContext._active_spark_context
    builder = SparkSession.builder.config("spark.jars", "/opt/a.jar,/opt/b.jar")
    returned = indextables.configure_spark(indextables.configure_spark(builder))
    assert returned is builder
    assert builder._options["spark.jars"].split(",") == [
        "/opt/a.jar",
        "/opt/b.jar",
        indextables.jar_path(),
    ]
    assert SparkContext._active_spark_context is active_before


def test_configure_spark_sets_exactly_the_settings_constant() -> None:
    builder = indextables.configure_spark(SparkSession.builder)
    assert set(indextables.SPARK_SETTINGS) <= set(builder._options)
    assert indextables.SPARK_SETTINGS["spark.sql.extensions"] == indextables.EXTENSIONS_CLASS
    assert builder._options["spark.sql.extensions"] == indextables.EXTENSIONS_CLASS


def test_configure_spark_appends_the_extensions_to_existing_ones_once() -> None:
    builder = SparkSession.builder.config("spark.sql.extensions", "com.example.Ext")
    indextables.configure_spark(indextables.configure_spark(builder))
    assert builder._options["spark.sql.extensions"].split(",") == [
        "com.example.Ext",
        indextables.EXTENSIONS_CLASS,
    ]


def test_configure_spark_sets_the_session_catalog_unless_one_is_set() -> None:
    builder = indextables.configure_spark(SparkSession.builder)
    assert builder._options["spark.sql.catalog.spark_catalog"] == indextables.CATALOG_CLASS
    delta = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
    other = SparkSession.builder.config("spark.sql.catalog.spark_catalog", delta)
    indextables.configure_spark(other)
    assert other._options["spark.sql.catalog.spark_catalog"] == delta


def test_session_has_the_plugin_jar_on_its_classpath(spark: SparkSession) -> None:
    jars = spark.sparkContext.getConf().get("spark.jars", "")
    assert indextables.jar_path() in jars.split(",")
    build_info = jvm(spark).io.indextables.spark.BuildInfo
    assert build_info.version() == indextables.__version__


class _FakeThrowable:
    def __init__(self, name: str, message: str, cause: _FakeThrowable | None = None) -> None:
        self._name, self._message, self._cause = name, message, cause

    def getClass(self) -> Any:
        return type("C", (), {"getName": lambda _self: self._name})()

    def getMessage(self) -> str:
        return self._message

    def getCause(self) -> _FakeThrowable | None:
        return self._cause


class _FakeJavaError(Exception):
    def __init__(self, java_exception: _FakeThrowable) -> None:
        super().__init__("An error occurred while calling o42.save.")
        self.java_exception = java_exception


def test_convert_exception_maps_a_plugin_throwable_in_the_cause_chain() -> None:
    ours = _FakeThrowable("io.indextables.spark.IndexTablesException", "column m has type map")
    error = _FakeJavaError(_FakeThrowable("org.apache.spark.SparkException", "Job aborted", ours))
    converted = convert_exception(error)
    assert isinstance(converted, IndexTablesError)
    assert str(converted) == "column m has type map"
    assert converted.java_class == "io.indextables.spark.IndexTablesException"


def test_convert_exception_keeps_the_error_class_from_the_jvm_or_the_message() -> None:
    ours = _FakeThrowable(
        "io.indextables.spark.exceptions.ConcurrentCommitException",
        "[INDEXTABLES_CONCURRENT_COMMIT] Gave up committing 'WRITE' to table /t after 10 attempts",
    )
    converted = convert_exception(_FakeJavaError(ours))
    assert isinstance(converted, IndexTablesError)
    # _FakeThrowable has no getErrorClass: the class comes from the message's prefix.
    assert converted.error_class == "INDEXTABLES_CONCURRENT_COMMIT"
    assert IndexTablesError("no class here").error_class is None


def test_convert_exception_leaves_other_errors_alone() -> None:
    error = _FakeJavaError(_FakeThrowable("java.io.IOException", "disk full"))
    assert convert_exception(error) is error
    plain = ValueError("io.indextables.spark.Foo: broken")
    assert isinstance(convert_exception(plain), IndexTablesError)


def test_configure_spark_extends_the_redaction_pattern_once() -> None:
    builder = indextables.configure_spark(indextables.configure_spark(SparkSession.builder))
    pattern = builder._options["spark.redaction.regex"]
    assert pattern.count("account[.]?key") == 1
    for key in [
        "spark.indextables.azure.accountKey",
        "spark.indextables.azure.connectionString",
        "spark.indextables.aws.secretKey",
        "spark.indextables.aws.sessionToken",
        "spark.indextables.azure.clientSecret",
    ]:
        assert re.search(pattern.replace("(?i)", "", 1), key, re.IGNORECASE), key
    # A pattern the builder already holds is kept, and extended.
    own = SparkSession.builder.config("spark.redaction.regex", "(?i)mysecret")
    indextables.configure_spark(own)
    assert own._options["spark.redaction.regex"].startswith("(?i)mysecret|")


# What the other line's JAR says it serves, by the running Spark's major version.
_OTHER_LINE_SERVES = {
    "3": "serves Spark 4.0.x, 4.1.x, 4.2.x on Scala 2.13",
    "4": "serves Spark 3.5.x on Scala 2.12",
}

_WRONG_LINE_SESSION = """
import sys
from pyspark.sql import SparkSession
try:
    (SparkSession.builder.master("local[1]").config("spark.jars", sys.argv[1])
     .config("spark.sql.extensions", sys.argv[2]).getOrCreate())
except Exception as e:
    print("REFUSED", e)
    sys.exit(3)
print("STARTED")
"""


@pytest.mark.parametrize(
    "extensions",
    [
        "io.indextables.spark.extensions.IndexTables4SparkExtensions",
        "io.indextables.extensions.IndexTablesSparkExtensions",
    ],
)
def test_the_jar_of_the_other_spark_line_fails_the_session_start_naming_both(
    extensions: str,
) -> None:
    """The JAR of the other Spark line, put on the class path by hand with the extensions,
    fails when the session starts, naming this Spark and the lines the JAR serves; never later,
    with a NoSuchMethodError, nor by a session that starts without the extensions."""
    running = pyspark.__version__
    other = "4.2.0" if running.startswith("3.") else "3.5.0"
    jar = indextables.session.jar_path(other)
    run = subprocess.run(
        [sys.executable, "-c", _WRONG_LINE_SESSION, jar, extensions],
        capture_output=True,
        text=True,
        timeout=180,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 3, out[-3000:]
    assert "INDEXTABLES_WRONG_SPARK_VERSION" in out, out[-3000:]
    assert f"this is Spark {running}" in out, out[-3000:]
    assert _OTHER_LINE_SERVES[running[0]] in out, out[-3000:]
    assert "NoSuchMethodError" not in out and "NoClassDefFoundError" not in out, out[-3000:]


_WRONG_LINE_DATA_SOURCE = """
import sys
from pyspark.sql import SparkSession
builder = SparkSession.builder.master("local[1]").config("spark.jars", sys.argv[1])
if sys.argv[3] != "-":
    builder = builder.config("spark.sql.catalog.spark_catalog", sys.argv[3])
spark = builder.getOrCreate()
def attempt(name, action):
    try:
        print("DONE", name, action())
    except Exception as e:
        print("REFUSED", name, " ".join(str(e).split())[:1500])
attempt("parquet", lambda: spark.range(5).write.mode("overwrite").parquet(sys.argv[2] + "/pq"))
attempt("parquet", lambda: spark.read.format("parquet").load(sys.argv[2] + "/pq").count())
for name in ("indextables", "io.indextables.provider.IndexTablesProvider"):
    attempt(name, lambda: spark.range(5).write.format(name).save(sys.argv[2] + "/it"))
attempt("catalog", lambda: len(spark.sql("SHOW TABLES").collect()))
"""


@pytest.mark.parametrize(
    "catalog",
    [
        "-",
        "io.indextables.spark.catalog.IndexTables4SparkCatalog",
        "io.indextables.catalog.IndexTablesCatalog",
    ],
)
def test_the_jar_of_the_other_spark_line_refuses_its_data_source_and_catalog_naming_both(
    tmp_path: Path, catalog: str
) -> None:
    """The other line's JAR on the class path without the extensions. Spark's service loader
    instantiates the data source on every format lookup: without the catalog, Parquet still
    writes and reads, and `format("indextables")` (or upstream's class name) fails naming both
    versions. With the catalog as the session catalog, the first statement that needs it fails,
    naming both versions (on Spark 3.5 a Parquet save does too). Never with a
    NoClassDefFoundError in the middle of a query."""
    running = pyspark.__version__
    other = "4.2.0" if running.startswith("3.") else "3.5.0"
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            _WRONG_LINE_DATA_SOURCE,
            indextables.session.jar_path(other),
            str(tmp_path),
            catalog,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    outcomes = [line for line in run.stdout.splitlines() if line.startswith(("DONE", "REFUSED"))]
    assert len(outcomes) == 5, out[-3000:]
    if catalog == "-":
        assert outcomes[:2] == ["DONE parquet None", "DONE parquet 5"], out[-3000:]
        assert outcomes[4] == "DONE catalog 0", out[-3000:]
        refusals = outcomes[2:4]
    else:
        # Parquet may need the session catalog too (Spark 3.5's save does, Spark 4.2's read does):
        # each step is done or refused as the catalog is; a read after a refused save finds no
        # folder.
        save, load = outcomes[:2]
        refusals = [line for line in (save, load) if "WRONG_SPARK_VERSION" in line]
        assert save in refusals or save == "DONE parquet None", save
        if save in refusals:
            assert load in refusals or load.startswith("REFUSED parquet [PATH_NOT_FOUND]"), load
        else:
            assert load in refusals or load == "DONE parquet 5", load
        refusals += outcomes[2:]
    for line in refusals:
        assert line.startswith("REFUSED"), line
        assert "[INDEXTABLES_WRONG_SPARK_VERSION]" in line, line
        assert f"this is Spark {running}" in line, line
        assert _OTHER_LINE_SERVES[running[0]] in line, line
    assert "NoClassDefFoundError" not in out and "NoSuchMethodError" not in out, out[-3000:]
