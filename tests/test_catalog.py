"""Tables by name: the session catalog IndexTables4SparkCatalog, end to end through PySpark.

Every statement users run on catalog tables (CREATE [AS SELECT], REPLACE, INSERT [OVERWRITE],
writeTo, saveAsTable, DROP, SHOW TABLES, DESCRIBE, ALTER TABLE ... TBLPROPERTIES, indexquery and
the IndexTables commands on names), checked against Parquet copies of the same rows and against
the files on disk; and a table in Hive's (Derby) metastore seen again by a new process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

import indextables
from helpers import (
    assert_same_rows,
    error_text,
    read_table,
    scan_node,
    split_files,
    version_actions,
)

pytestmark = pytest.mark.usefixtures("layout")

ROWS = [
    (1, "2024-01-01", "ERROR", "connection timeout after 30s"),
    (2, "2024-01-01", "INFO", "block served to client"),
    (3, "2024-01-02", "WARN", "disk nearly full on node 7"),
    (4, "2024-01-02", "ERROR", "timeout waiting for lock"),
    (5, "2024-01-03", "INFO", "session closed for user bob"),
]
SCHEMA = "id long, day string, level string, message string"
TEXT = "'spark.indextables.indexing.typemap.message'='text'"


@pytest.fixture
def name() -> Iterator[str]:
    """A fresh table name, dropped after the test."""
    table = f"cat_{uuid.uuid4().hex[:10]}"
    yield table
    active = SparkSession.getActiveSession()
    if active is not None:
        active.sql(f"DROP TABLE IF EXISTS {table}")


@pytest.fixture
def rows(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(ROWS, SCHEMA)


def _parquet(spark: SparkSession, df: DataFrame, tmp_path: Path, label: str) -> DataFrame:
    """The rows of df, as a Parquet table: the oracle."""
    path = str(tmp_path / f"oracle_{label}")
    df.write.mode("overwrite").parquet(path)
    return spark.read.parquet(path)


def _location(spark: SparkSession, table: str) -> str:
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
    (location,) = [r.data_type for r in rows if r.col_name == "Location"]
    return str(location).removeprefix("file:")


def _recorded_configuration(location: str) -> dict[str, str]:
    """The configuration of the newest metaData action in the table's version files."""
    config: dict[str, str] = {}
    versions = sorted((Path(location) / "_transaction_log").glob("0*.json"))
    for version in versions:
        for action in version_actions(location, int(version.name.split(".")[0])):
            if "metaData" in action:
                config = action["metaData"]["configuration"]
    return config


def test_create_table_with_properties_insert_and_indexquery(
    spark: SparkSession, name: str, rows: DataFrame, tmp_path: Path
) -> None:
    spark.sql(
        f"CREATE TABLE {name} (id BIGINT, day STRING, level STRING, message STRING) "
        f"USING indextables PARTITIONED BY (day) TBLPROPERTIES ({TEXT}, 'team'='search')"
    )
    assert spark.table(name).count() == 0
    rows.createOrReplaceTempView("cat_rows")
    spark.sql(f"INSERT INTO {name} SELECT * FROM cat_rows")

    location = _location(spark, name)
    config = _recorded_configuration(location)
    assert config["spark.indextables.indexing.typemap.message"] == "text"
    assert config["team"] == "search"
    assert sorted(p.parent.name for p in split_files(location)) == [
        "day=2024-01-01",
        "day=2024-01-02",
        "day=2024-01-03",
    ]

    oracle = _parquet(spark, rows, tmp_path, "create")
    assert_same_rows(spark.table(name), oracle)
    # message is a text field: its indexquery is a token search, pushed to the index.
    found = spark.sql(f"SELECT * FROM {name} WHERE message indexquery 'timeout'")
    assert "PushedIndexQuery: [message indexquery 'timeout']" in scan_node(found)
    assert_same_rows(found, oracle.filter("message like '%timeout%'"))
    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE {name}").collect()}
    assert described["message"] == "string"
    assert "# Partition Information" in described


def test_create_table_as_select_and_replace_table(
    spark: SparkSession, name: str, rows: DataFrame, tmp_path: Path
) -> None:
    rows.createOrReplaceTempView("cat_rows")
    spark.sql(
        f"CREATE TABLE {name} USING indextables PARTITIONED BY (day) TBLPROPERTIES ({TEXT}) "
        "AS SELECT * FROM cat_rows"
    )
    assert_same_rows(spark.table(name), _parquet(spark, rows, tmp_path, "ctas"))
    assert spark.sql(f"SELECT id FROM {name} WHERE message indexquery 'disk'").collect()[0].id == 3

    # REPLACE TABLE AS SELECT: new rows and a new schema in one commit; history is kept.
    spark.sql(
        f"REPLACE TABLE {name} USING indextables AS SELECT id, message FROM cat_rows WHERE id > 3"
    )
    assert_same_rows(
        spark.table(name),
        _parquet(spark, rows.filter("id > 3").select("id", "message"), tmp_path, "rtas"),
    )
    history = spark.sql(f"DESCRIBE INDEXTABLES HISTORY {name}").collect()
    assert [h.version for h in history] == [1, 0]
    assert history[0].files_removed == 3
    # The table's indexing carries over a replace that does not change it.
    assert (
        _recorded_configuration(_location(spark, name))[
            "spark.indextables.indexing.typemap.message"
        ]
        == "text"
    )

    # REPLACE TABLE without a query: empty, with the new columns.
    spark.sql(f"REPLACE TABLE {name} (k STRING) USING indextables")
    assert spark.table(name).columns == ["k"]
    assert spark.table(name).count() == 0


def test_insert_overwrite_static_and_dynamic_partitions(
    spark: SparkSession, name: str, rows: DataFrame, tmp_path: Path
) -> None:
    rows.write.format("indextables").partitionBy("day").saveAsTable(name)
    new = spark.createDataFrame(
        [(10, "2024-01-02", "INFO", "replaced row"), (11, "2024-01-09", "INFO", "new day")],
        SCHEMA,
    )
    new.createOrReplaceTempView("cat_new")

    # Static: PARTITION (day = '2024-01-02') replaces that partition only.
    spark.sql(
        f"INSERT OVERWRITE {name} PARTITION (day = '2024-01-02') "
        "SELECT id, level, message FROM cat_new WHERE day = '2024-01-02'"
    )
    expected = rows.filter("day <> '2024-01-02'").unionByName(new.filter("day = '2024-01-02'"))
    assert_same_rows(spark.table(name), _parquet(spark, expected, tmp_path, "static"))

    # Dynamic: only the partitions the rows fall in.
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        spark.sql(f"INSERT OVERWRITE {name} SELECT * FROM cat_new WHERE day = '2024-01-09'")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    expected = expected.unionByName(new.filter("day = '2024-01-09'"))
    assert_same_rows(spark.table(name), _parquet(spark, expected, tmp_path, "dynamic"))

    # A plain INSERT OVERWRITE replaces the table.
    spark.sql(f"INSERT OVERWRITE {name} SELECT * FROM cat_new")
    assert_same_rows(spark.table(name), _parquet(spark, new, tmp_path, "all"))


def test_write_to_append_overwrite_partitions_and_save_as_table(
    spark: SparkSession, name: str, rows: DataFrame, tmp_path: Path
) -> None:
    (
        rows.filter("id <= 2")
        .write.format("indextables")
        .option("spark.indextables.indexing.typemap.message", "text")
        .partitionBy("day")
        .saveAsTable(name)
    )
    rows.filter("id > 2").writeTo(name).append()
    assert_same_rows(spark.table(name), _parquet(spark, rows, tmp_path, "append"))

    replacement = spark.createDataFrame([(20, "2024-01-03", "WARN", "timeout again")], SCHEMA)
    replacement.writeTo(name).overwritePartitions()
    expected = rows.filter("day <> '2024-01-03'").unionByName(replacement)
    assert_same_rows(spark.table(name), _parquet(spark, expected, tmp_path, "partitions"))

    # saveAsTable in append mode adds; in overwrite mode replaces, keeping the table's indexing.
    rows.filter("id = 1").write.format("indextables").mode("append").saveAsTable(name)
    assert spark.table(name).filter("id = 1").count() == 2
    rows.write.format("indextables").mode("overwrite").saveAsTable(name)
    assert_same_rows(spark.table(name), _parquet(spark, rows, tmp_path, "overwrite"))
    assert spark.sql(f"SELECT * FROM {name} WHERE message indexquery 'served'").count() == 1
    # ErrorIfExists, the default mode, refuses an existing table.
    with pytest.raises(Exception, match="already exists"):
        rows.write.format("indextables").saveAsTable(name)


def test_drop_table_deletes_a_managed_tables_files_and_keeps_an_external_ones(
    spark: SparkSession, rows: DataFrame, tmp_path: Path
) -> None:
    managed = f"cat_managed_{uuid.uuid4().hex[:8]}"
    rows.write.format("indextables").saveAsTable(managed)
    managed_location = Path(_location(spark, managed))
    assert split_files(str(managed_location))
    spark.sql(f"DROP TABLE {managed}")
    assert not managed_location.exists() or not any(managed_location.rglob("*"))
    assert managed not in [t.tableName for t in spark.sql("SHOW TABLES").collect()]

    external = f"cat_external_{uuid.uuid4().hex[:8]}"
    location = tmp_path / "external"
    spark.sql(
        f"CREATE TABLE {external} USING indextables LOCATION '{location}' AS SELECT * FROM "
        "VALUES (1L, 'a') AS v(id, s)"
    )
    extended = {
        r.col_name: r.data_type for r in spark.sql(f"DESCRIBE EXTENDED {external}").collect()
    }
    assert extended["Provider"] == "indextables"
    assert extended["Type"] == "EXTERNAL"
    files = sorted(p.relative_to(location) for p in location.rglob("*") if p.is_file())
    spark.sql(f"DROP TABLE {external}")
    assert sorted(p.relative_to(location) for p in location.rglob("*") if p.is_file()) == files
    # The files are a table still: registered again, by location, with no columns given.
    spark.sql(f"CREATE TABLE {external} USING indextables LOCATION '{location}'")
    assert [tuple(r) for r in spark.table(external).collect()] == [(1, "a")]
    spark.sql(f"DROP TABLE {external}")
    assert split_files(str(location))


def test_show_tables_describe_extended_and_alter_properties(
    spark: SparkSession, name: str, rows: DataFrame
) -> None:
    rows.write.format("indextables").option(
        "spark.indextables.indexing.typemap.message", "text"
    ).saveAsTable(name)
    assert name in [t.tableName for t in spark.sql("SHOW TABLES").collect()]

    spark.sql(
        f"ALTER TABLE {name} SET TBLPROPERTIES ('spark.indextables.checkpoint.interval'='2', "
        "'owner.team'='search')"
    )
    extended = {
        r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
    }
    # Spark 4.2 names the table by its parts (Catalog, Database, Table), earlier Sparks in one.
    if "Name" in extended:
        assert extended["Name"] == f"spark_catalog.default.{name}"
    else:
        parts = (extended.get("Catalog"), extended.get("Database"), extended.get("Table"))
        assert parts == ("spark_catalog", "default", name), extended
    assert extended["Provider"] == "indextables"
    assert "spark.indextables.checkpoint.interval=2" in extended["Table Properties"]
    assert "spark.indextables.indexing.typemap.message=text" in extended["Table Properties"]
    assert "owner.team=search" in extended["Table Properties"]
    assert "docMappingSchema" not in extended["Table Properties"]
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}
    assert props["owner.team"] == "search"
    history = spark.sql(f"DESCRIBE INDEXTABLES HISTORY {name}").collect()
    assert history[0].operation == "SET TBLPROPERTIES"

    # The recorded interval is the table-property layer: the next write (version 2) checkpoints.
    rows.writeTo(name).append()
    pointer = json.loads(
        (Path(_location(spark, name)) / "_transaction_log" / "_last_checkpoint").read_text()
    )
    assert pointer["version"] == 2

    spark.sql(f"ALTER TABLE {name} UNSET TBLPROPERTIES ('owner.team')")
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}
    assert "owner.team" not in props

    # How columns are indexed, storage credentials and unknown keys are refused, naming them.
    for statement, error_class in (
        (
            f"ALTER TABLE {name} SET TBLPROPERTIES "
            "('spark.indextables.indexing.typemap.level'='text')",
            "INDEXTABLES_INDEXING_PROPERTY_ALTERED",
        ),
        (
            f"ALTER TABLE {name} SET TBLPROPERTIES ('spark.indextables.aws.secretKey'='x')",
            "INDEXTABLES_STORAGE_PROPERTY_IN_TABLE",
        ),
        (
            f"ALTER TABLE {name} SET TBLPROPERTIES ('spark.indextables.checkpoint.intervall'='3')",
            "INDEXTABLES_UNKNOWN_OPTION",
        ),
        (f"ALTER TABLE {name} ADD COLUMNS (extra INT)", "INDEXTABLES_UNSUPPORTED_TABLE_CHANGE"),
    ):
        with pytest.raises(Exception) as info:
            spark.sql(statement)
        assert error_class in error_text(info.value), statement
    assert spark.table(name).count() == 2 * len(ROWS)


def test_sql_commands_and_time_travel_on_table_names(
    spark: SparkSession, name: str, rows: DataFrame
) -> None:
    rows.filter("id <= 2").write.format("indextables").saveAsTable(name)
    rows.filter("id > 2").writeTo(name).append()
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE {name}").collect()
    assert (state.version, state.num_records) == (1, len(ROWS))
    assert state.table_path.removeprefix("file:") == _location(spark, name)
    files = spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG default.{name}").collect()
    assert sum(f.num_records for f in files) == len(ROWS)
    (checkpoint,) = spark.sql(f"CHECKPOINT INDEXTABLES spark_catalog.default.{name}").collect()
    assert checkpoint.version == 1
    assert spark.sql(f"SELECT * FROM {name} VERSION AS OF 0").count() == 2
    assert spark.sql(f"SELECT * FROM {name} VERSION AS OF 1").count() == len(ROWS)

    with pytest.raises(Exception) as info:
        spark.sql("DESCRIBE INDEXTABLES STATE no_such_table_anywhere")
    assert "INDEXTABLES_TABLE_NOT_FOUND" in error_text(info.value)


def test_create_table_errors_name_what_is_wrong(
    spark: SparkSession, name: str, rows: DataFrame, tmp_path: Path
) -> None:
    location = tmp_path / "t"
    rows.write.format("indextables").save(str(location))
    cases = [
        (
            f"CREATE TABLE {name} (x INT) USING indextables LOCATION '{location}'",
            "INDEXTABLES_CATALOG_SCHEMA_MISMATCH",
        ),
        (
            f"CREATE TABLE {name} (id BIGINT, day STRING, level STRING, msg STRING) "
            f"USING indextables LOCATION '{location}'",
            "INDEXTABLES_CATALOG_SCHEMA_MISMATCH",
        ),
        (
            f"CREATE TABLE {name} USING indextables LOCATION '{tmp_path / 'empty'}'",
            "INDEXTABLES_CATALOG_SCHEMA_REQUIRED",
        ),
        (
            f"CREATE TABLE {name} USING indextables LOCATION '{location}' AS SELECT 1 AS id",
            "INDEXTABLES_CATALOG_LOCATION_EXISTS",
        ),
        (
            f"CREATE TABLE {name} (id INT) USING indextables "
            "TBLPROPERTIES ('spark.indextables.indexing.typemap.nosuch'='text')",
            "nosuch",
        ),
    ]
    for statement, expected in cases:
        with pytest.raises(Exception) as info:
            spark.sql(statement)
        assert expected in error_text(info.value), statement
        assert name not in [t.tableName for t in spark.sql("SHOW TABLES").collect()]
    # The table at the location is untouched.
    assert_same_rows(read_table(spark, str(location)), rows)


def test_path_names_still_resolve(spark: SparkSession, rows: DataFrame, tmp_path: Path) -> None:
    path = str(tmp_path / "by_path")
    rows.write.format("indextables").save(path)
    rows.writeTo(f"indextables.`{path}`").append()
    assert_same_rows(spark.table(f"indextables.`{path}`"), rows.unionByName(rows))
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE indextables.`{path}`").collect()
    assert state.num_records == 2 * len(ROWS)


def test_upstream_class_names_resolve_to_ours(
    spark: SparkSession, name: str, rows: DataFrame, tmp_path: Path
) -> None:
    provider = "io.indextables.provider.IndexTablesProvider"
    path = str(tmp_path / "aliased")
    rows.write.format(provider).save(path)
    assert_same_rows(spark.read.format(provider).load(path), rows)
    spark.sql(f"CREATE TABLE {name} USING {provider} LOCATION '{path}'")
    extended = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE EXTENDED {name}").collect()}
    assert extended["Provider"] == "indextables"
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    for alias, ours in (
        ("io.indextables.extensions.IndexTablesSparkExtensions", indextables.EXTENSIONS_CLASS),
        ("io.indextables.catalog.IndexTablesCatalog", indextables.CATALOG_CLASS),
        (provider, "io.indextables.spark.core.IndexTables4SparkTableProvider"),
    ):
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        alias_class = jvm.java.lang.Class.forName(alias, True, loader)
        assert jvm.java.lang.Class.forName(ours, True, loader).isAssignableFrom(alias_class)


_METASTORE_SCRIPT = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession
    import indextables

    root, step, layout = sys.argv[1], sys.argv[2], sys.argv[3]
    builder = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.indextables.write.layout", layout)
        .config("spark.sql.warehouse.dir", root + "/warehouse")
        .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                "jdbc:derby:;databaseName=" + root + "/metastore_db;create=true")
        .config("spark.driver.extraJavaOptions", "-Dderby.system.home=" + root)
        .config("spark.sql.catalog.spark_catalog", "io.indextables.catalog.IndexTablesCatalog")
        .config("spark.sql.extensions", "io.indextables.extensions.IndexTablesSparkExtensions")
        .enableHiveSupport()
    )
    spark = indextables.configure_spark(builder).getOrCreate()
    if step == "create":
        spark.sql(
            "CREATE TABLE logs (id BIGINT, message STRING) USING indextables "
            "TBLPROPERTIES ('spark.indextables.indexing.typemap.message'='text')"
        )
        spark.sql("INSERT INTO logs VALUES (1, 'connection timeout'), (2, 'block served')")
    else:
        print("TABLES", sorted(t.tableName for t in spark.sql("SHOW TABLES").collect()))
        found = spark.sql("SELECT id FROM logs WHERE message indexquery 'timeout'")
        print("FOUND", [r.id for r in found.collect()])
        print("CATALOG", spark.conf.get("spark.sql.catalogImplementation"))
        spark.sql("DROP TABLE logs")
    spark.stop()
    """
)


@pytest.mark.line_neutral
def test_a_table_in_the_hive_metastore_survives_a_new_session(tmp_path: Path, layout: str) -> None:
    script = tmp_path / "metastore_session.py"
    script.write_text(_METASTORE_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}

    def run(step: str) -> str:
        result = subprocess.run(
            [sys.executable, str(script), str(tmp_path), step, layout],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr[-5000:]
        return result.stdout

    run("create")
    table_dir = tmp_path / "warehouse" / "logs"
    assert split_files(str(table_dir))
    # The table has the layout of the session that created it.
    parquet_files = sorted(table_dir.rglob("*.parquet"))
    assert bool(parquet_files) == (layout == "companion"), parquet_files
    output = run("read")
    assert "TABLES ['logs']" in output, output
    assert "FOUND [1]" in output, output
    assert "CATALOG hive" in output, output
    # The managed table's files (a companion's Parquet files too) went with DROP TABLE in the
    # second session.
    assert not split_files(str(table_dir))
    assert not list(table_dir.rglob("*.parquet"))


def test_the_readme_quick_start_runs(
    spark: SparkSession, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme[readme.index("## Python usage") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("```\n", start)]
    assert "CREATE TABLE logs" in code and "IndexTable.for_name" in code
    spark.sql("DROP TABLE IF EXISTS logs")
    try:
        exec(compile(code, "README.md quick start", "exec"), {})
        rows = spark.sql("SELECT id FROM logs WHERE message indexquery 'timeout'").collect()
        assert sorted(r.id for r in rows) == [1, 3]
    finally:
        spark.sql("DROP TABLE IF EXISTS logs")


def test_other_providers_tables_stay_the_session_catalogs(
    spark: SparkSession, name: str, rows: DataFrame, tmp_path: Path
) -> None:
    rows.createOrReplaceTempView("cat_rows")
    spark.sql(f"CREATE TABLE {name} USING parquet AS SELECT * FROM cat_rows")
    spark.sql(f"INSERT INTO {name} SELECT * FROM cat_rows WHERE id = 1")
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('team'='search')")
    extended = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE EXTENDED {name}").collect()}
    assert extended["Provider"] == "parquet"
    expected = rows.unionByName(rows.filter("id = 1"))
    assert_same_rows(spark.table(name), _parquet(spark, expected, tmp_path, "parquet"))
    # IF NOT EXISTS leaves an existing table alone, whatever its provider.
    spark.sql(f"CREATE TABLE IF NOT EXISTS {name} (x INT) USING indextables")
    assert spark.table(name).count() == len(ROWS) + 1
