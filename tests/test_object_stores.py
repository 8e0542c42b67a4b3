"""Tables on S3 and on Azure Blob Storage, end to end through PySpark, against real servers.

moto (S3, with IAM authentication on) and Azurite (Azure) run on 127.0.0.1 for the session
(tests/conftest.py starts them with tests/storage_servers.py). Every test runs on both stores
unless it says otherwise. The oracle is the same data on local disk: a Parquet copy, or the
same IndexTables table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from helpers import assert_same_rows, error_text, jvm, scan_metrics, scan_node
from storage_servers import AzureServer, S3Server
from test_overwrite_failures import _day, _race, _replace_where, log_rows

TESTS_DIR = Path(__file__).resolve().parent


@dataclass
class Store:
    """One object store as the tests use it."""

    kind: str
    conf: dict[str, str]
    new_table: Callable[[str], str]
    keys: Callable[[str], list[str]]
    """The object names below a table URL, relative to the table."""
    delete: Callable[[str, str], None]
    """Deletes the object at a path relative to a table URL."""
    secrets: list[str]


def _s3_store(server: S3Server) -> Store:
    def new_table(name: str) -> str:
        return f"s3://{server.new_bucket()}/{name}"

    def split(url: str) -> tuple[str, str]:
        bucket, _, key = url.removeprefix("s3://").removeprefix("s3a://").partition("/")
        return bucket, key

    def keys(url: str) -> list[str]:
        bucket, prefix = split(url)
        pages = server.client().get_paginator("list_objects_v2")
        return sorted(
            o["Key"][len(prefix) + 1 :]
            for page in pages.paginate(Bucket=bucket, Prefix=prefix + "/")
            for o in page.get("Contents", [])
        )

    def delete(url: str, relative: str) -> None:
        bucket, prefix = split(url)
        server.client().delete_object(Bucket=bucket, Key=f"{prefix}/{relative}")

    return Store("s3", server.conf(), new_table, keys, delete, [server.secret_key])


def _azure_store(server: AzureServer) -> Store:
    from storage_servers import AZURITE_KEY

    def new_table(name: str) -> str:
        return server.table_url(server.new_container(), name)

    def split(url: str) -> tuple[str, str]:
        rest = url.split("://", 1)[1]
        container, _, tail = rest.partition("@")
        return container, tail.partition("/")[2]

    def keys(url: str) -> list[str]:
        container, prefix = split(url)
        client = server.service().get_container_client(container)
        return sorted(b.name[len(prefix) + 1 :] for b in client.list_blobs(prefix + "/"))

    def delete(url: str, relative: str) -> None:
        container, prefix = split(url)
        server.service().get_container_client(container).delete_blob(f"{prefix}/{relative}")

    return Store(
        "azure", server.conf(), new_table, keys, delete, [AZURITE_KEY, server.connection_string]
    )


@pytest.fixture(params=["s3", "azure"])
def store(request: pytest.FixtureRequest, spark: SparkSession) -> Iterator[Store]:
    """A store, with the session configured to reach it (upstream's session keys)."""
    server = request.getfixturevalue(request.param)
    made = _s3_store(server) if request.param == "s3" else _azure_store(server)
    for k, v in made.conf.items():
        spark.conf.set(k, v)
    yield made
    for k in made.conf:
        spark.conf.unset(k)


def _read(spark: SparkSession, url: str, **options: str) -> DataFrame:
    return spark.read.format("indextables").options(**options).load(url)


def _ids(df: DataFrame) -> list[int]:
    return sorted(r["id"] for r in df.select("id").collect())


# ---------------------------------------------------------------------------------------------
# Writes and reads
# ---------------------------------------------------------------------------------------------


def test_write_append_overwrite_and_read_match_parquet(
    spark: SparkSession, store: Store, logs_df: DataFrame, logs_parquet: DataFrame
) -> None:
    url = store.new_table("logs")
    first = logs_df.filter("id % 2 = 0")
    second = logs_df.filter("id % 2 = 1")
    text = {"spark.indextables.indexing.typemap.message": "text"}
    first.write.format("indextables").options(**text).partitionBy("day").save(url)
    second.write.format("indextables").mode("append").save(url)

    table = _read(spark, url)
    assert_same_rows(table, logs_parquet)
    for predicate in [
        "level = 'ERROR'",
        "host = 'host-3' AND latency_ms > 200",
        "day = '2024-03-02'",
    ]:
        assert_same_rows(table.filter(predicate), logs_parquet.filter(predicate))
    # Filters reach the splits on the store: the plan shows them pushed.
    assert "PushedQuery" in scan_node(table.filter("level = 'ERROR'"))

    # Splits live under their partition directories, next to the log.
    keys = store.keys(url)
    assert any(k.startswith("_transaction_log/00000000000000000000.json") for k in keys)
    assert any(k.startswith("day=") and k.endswith(".split") for k in keys)

    # Whole-table overwrite: only the new rows remain.
    subset = logs_df.filter("level = 'WARN'")
    subset.write.format("indextables").mode("overwrite").save(url)
    assert_same_rows(_read(spark, url), logs_parquet.filter("level = 'WARN'"))


def test_companion_table_on_the_store_matches_parquet(
    spark: SparkSession, store: Store, logs_df: DataFrame, logs_parquet: DataFrame
) -> None:
    """A companion table on the store: its Parquet files go up beside its splits, scans read
    them (from local copies on Azure), searches fetch their rows from them (tantivy4java reads
    S3 itself; Azure through local copies too)."""
    url = store.new_table("companion")
    options = {
        "spark.indextables.indexing.typemap.message": "text",
        "spark.indextables.write.layout": "companion",
    }
    logs_df.filter("id % 2 = 0").write.format("indextables").options(**options).partitionBy(
        "day"
    ).save(url)
    logs_df.filter("id % 2 = 1").write.format("indextables").mode("append").save(url)
    keys = store.keys(url)
    parquet_files = [k for k in keys if k.startswith("day=") and k.endswith(".parquet")]
    splits = [k for k in keys if k.startswith("day=") and k.endswith(".split")]
    assert parquet_files and len(parquet_files) == len(splits), keys

    table = _read(spark, url)
    assert "Route: parquet" in scan_node(table)
    assert_same_rows(table, logs_parquet)
    for predicate in ["level = 'ERROR'", "host = 'host-3' AND latency_ms > 200"]:
        assert "PushedQuery" in scan_node(table.filter(predicate))
        assert_same_rows(table.filter(predicate), logs_parquet.filter(predicate))
    searched = table.filter("message indexquery 'error'")
    expected = logs_parquet.filter("lower(message) rlike '(^|[^a-z0-9])error([^a-z0-9]|$)'")
    assert_same_rows(searched, expected)
    grouped = table.groupBy("level").count()
    assert_same_rows(grouped, logs_parquet.groupBy("level").count())


def test_indexquery_on_the_store_matches_the_same_table_on_disk(
    spark: SparkSession, store: Store, logs_df: DataFrame, logs_table: str
) -> None:
    url = store.new_table("text")
    (
        logs_df.write.format("indextables")
        .option("spark.indextables.indexing.typemap.message", "text")
        .save(url)
    )
    remote = _read(spark, url)
    local = _read(spark, logs_table)
    for query in ["error", "failed OR timeout", '"connection reset"', "NOT info"]:
        expected = local.filter(f"message indexquery '{query}'")
        assert_same_rows(remote.filter(f"message indexquery '{query}'"), expected)
    spark.sql(f"CREATE OR REPLACE TEMP VIEW remote_logs AS SELECT * FROM indextables.`{url}`")
    got = spark.sql("SELECT count(*) AS n FROM remote_logs WHERE message indexquery 'error'")
    assert got.collect()[0]["n"] == local.filter("message indexquery 'error'").count()


def test_scan_metrics_count_the_bytes_fetched_from_the_store(
    spark: SparkSession, store: Store, logs_df: DataFrame
) -> None:
    # The scan's "bytes fetched from storage" and "split cache hits" (`metrics/ScanMetrics`):
    # a first search after the caches were flushed fetches the splits' bytes from the store;
    # the same search again finds them in tantivy4java's cache.
    url = store.new_table("metrics")
    logs_df.write.format("indextables").option(
        "spark.indextables.indexing.typemap.message", "text"
    ).save(url)
    counters = jvm(spark).io.indextables.spark.metrics.NativeCounters
    open_before = counters.bytesFetched().openWindows()
    spark.conf.set("spark.indextables.read.driverSearch.maxRows", "0")
    try:
        spark.sql("FLUSH INDEXTABLES SEARCHER CACHE").collect()
        spark.sql("FLUSH INDEXTABLES DISK CACHE").collect()
        first = _read(spark, url).filter("message indexquery 'error'")
        matches = len(first.collect())
        cold = scan_metrics(first)
        # Again, past tantivy's leaf-search cache (which would answer it without reading a
        # byte): the search reads the same byte ranges, now from the in-memory split cache.
        spark.conf.set("spark.indextables.cache.queryCache.enabled", "false")
        again = _read(spark, url).filter("message indexquery 'error'")
        again.collect()
        warm = scan_metrics(again)
    finally:
        spark.conf.unset("spark.indextables.read.driverSearch.maxRows")
        spark.conf.unset("spark.indextables.cache.queryCache.enabled")
    assert matches > 0
    assert cold["documentsMatched"] == matches and cold["rowsReturned"] == matches
    assert cold["splitsSearched"] >= 1 and cold["nativeSearchTime"] > 0
    assert cold["bytesFetched"] > 10_000, cold
    assert warm["splitCacheHits"] > 0, warm
    assert warm["bytesFetched"] < cold["bytesFetched"], (cold, warm)
    # Every task closed its window on the JVM's counters.
    assert counters.bytesFetched().openWindows() == open_before


def test_checkpoint_time_travel_and_describe(spark: SparkSession, store: Store) -> None:
    url = store.new_table("versions")
    for v in range(3):
        rows = spark.range(v * 100, v * 100 + 100).selectExpr("id", f"'{v}' AS batch")
        rows.write.format("indextables").mode("append" if v else "errorifexists").save(url)
    (checkpoint,) = spark.sql(f"CHECKPOINT INDEXTABLES '{url}'").collect()
    assert checkpoint["version"] == 2
    spark.range(300, 350).selectExpr("id", "'3' AS batch").write.format("indextables").mode(
        "append"
    ).save(url)

    assert "_transaction_log/_last_checkpoint" in store.keys(url)
    assert _read(spark, url).count() == 350
    assert _ids(_read(spark, url, versionAsOf="0")) == list(range(100))
    assert _read(spark, url, versionAsOf="2").count() == 300
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{url}'").collect()
    assert state["version"] == 3
    history = spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{url}'").collect()
    assert sorted(r["version"] for r in history) == [0, 1, 2, 3]
    files = spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{url}'").collect()
    assert len(files) >= 4


def test_large_splits_upload_in_parts_and_read_back(spark: SparkSession, store: Store) -> None:
    """Splits above the threshold go up as S3 multipart uploads / Azure staged blocks."""
    url = store.new_table("big")
    settings = {
        "s3": {
            "spark.indextables.s3.multipartThreshold": "5M",
            "spark.indextables.s3.partSize": "5M",
        },
        "azure": {"spark.indextables.azure.blockSize": "1M"},
    }[store.kind]
    rows = spark.range(0, 300_000, numPartitions=1).selectExpr(
        "id", "sha2(cast(id AS string), 256) AS digest", "uuid() AS noise"
    )
    rows.write.format("indextables").options(**settings).save(url)
    splits = [k for k in store.keys(url) if k.endswith(".split")]
    assert len(splits) == 1
    table = _read(spark, url)
    assert table.count() == 300_000
    digest = table.filter("id = 123456").collect()[0]["digest"]
    assert table.filter(f"digest = '{digest}'").select("id").collect()[0]["id"] == 123456


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


def _error_of(action: Callable[[], object]) -> str:
    with pytest.raises(Exception) as caught:
        action()
    return error_text(caught.value)


def test_wrong_credentials_missing_bucket_and_deleted_split_name_the_path(
    spark: SparkSession, store: Store
) -> None:
    url = store.new_table("errors")
    spark.range(0, 1000).selectExpr("id", "cast(id % 3 AS string) AS k").write.format(
        "indextables"
    ).save(url)

    # A missing bucket / container.
    missing = (
        "s3://no-such-bucket-indextables/t"
        if store.kind == "s3"
        else "abfss://no-such-container@devstoreaccount1.dfs.core.windows.net/t"
    )
    text = _error_of(lambda: spark.range(3).write.format("indextables").save(missing))
    assert "INDEXTABLES_STORAGE_NOT_FOUND" in text, text
    assert missing.split("://")[1].split("/")[0].split("@")[0] in text, text
    assert "Job aborted" not in text, "the missing bucket was found only by the tasks"

    # A deleted split.
    split = next(k for k in store.keys(url) if k.endswith(".split"))
    store.delete(url, split)
    text = _error_of(lambda: _read(spark, url).filter("k = '1'").collect())
    assert split in text, text

    # Wrong credentials: refused by the server; the error names the path.
    if store.kind == "s3":
        wrong = {"spark.indextables.aws.secretKey": "wrong-secret-for-indextables"}
    else:
        good = store.conf["spark.indextables.azure.connectionString"]
        wrong = {"spark.indextables.azure.connectionString": good.replace("Key=", "Key=AAAA")}
    text = _error_of(lambda: _read(spark, url, **wrong).collect())
    assert "INDEXTABLES_STORAGE_REQUEST_FAILED" in text and "403" in text, text
    assert url in text, text
    for secret in store.secrets + list(wrong.values()):
        assert secret not in text


# ---------------------------------------------------------------------------------------------
# Secrets
# ---------------------------------------------------------------------------------------------


class DriverLog:
    """Everything the driver JVM logs while it is open, into a file: an appender added to
    log4j's root logger at run time (the JVM's own stderr is not the test's)."""

    def __init__(self, spark: SparkSession, path: Path) -> None:
        j = jvm(spark)
        self.path = path
        self.context = j.org.apache.logging.log4j.LogManager.getContext(False)
        pattern = j.org.apache.logging.log4j.core.layout.PatternLayout.newBuilder()
        layout = pattern.withPattern("%d %p %c: %m%n").build()
        builder = j.org.apache.logging.log4j.core.appender.FileAppender.newBuilder()
        self.appender = (
            builder.withFileName(str(path)).setName("indextables-test").setLayout(layout).build()
        )
        self.appender.start()
        root = self.context.getConfiguration().getRootLogger()
        root.addAppender(self.appender, None, None)
        self.context.updateLoggers()

    def close(self) -> str:
        root = self.context.getConfiguration().getRootLogger()
        root.removeAppender("indextables-test")
        self.context.updateLoggers()
        self.appender.stop()
        return self.path.read_text(errors="replace")


def test_secrets_appear_nowhere(spark: SparkSession, store: Store, tmp_path: Path) -> None:
    """After a write, a read, a commit conflict and a failed read: no secret in the driver's
    log (at INFO), EXPLAIN, DESCRIBE, the SQL tab's executions (plans and the settings they ran
    with), error messages, or anything written to the table's log."""
    sc = spark.sparkContext
    sc.setLogLevel("INFO")
    log = DriverLog(spark, tmp_path / "driver.log")
    seen: list[str] = []
    try:
        url = store.new_table("secrets")
        rows = log_rows(spark, 0, 2_000, days=2)
        rows.write.format("indextables").partitionBy("day").save(url)
        table = _read(spark, url).filter("level = 'ERROR'")
        assert table.count() == rows.filter("level = 'ERROR'").count()
        seen.append(str(table._jdf.queryExecution().toString()))
        seen.extend(
            str(r)
            for r in spark.sql(
                f"EXPLAIN FORMATTED SELECT * FROM indextables.`{url}` WHERE level = 'ERROR'"
            ).collect()
        )
        for command in ["STATE", "HISTORY", "TRANSACTION LOG"]:
            seen.extend(
                str(r) for r in spark.sql(f"DESCRIBE INDEXTABLES {command} '{url}'").collect()
            )

        # A commit conflict: two overwrites of one day, the second planned before the first
        # committed.
        day = f"day = DATE'{_day(1)}'"
        error = _race(
            url,
            tmp_path,
            _replace_where(day),
            log_rows(spark, 20_000, 200, days=1, first_day=1),
            lambda: _replace_where(day)(log_rows(spark, 10_000, 300, days=1, first_day=1)).save(
                url
            ),
        )
        assert error is not None
        conflict = error_text(error)
        assert "INDEXTABLES_CONCURRENT_COMMIT" in conflict, conflict
        seen.append(conflict)
        # Failed reads.
        seen.append(_error_of(lambda: _read(spark, url + "-missing").collect()))
        seen.append(_error_of(lambda: _read(spark, url, versionAsOf="99").collect()))

        # The SQL tab: every execution's plan description and the settings it ran with.
        status = spark._jsparkSession.sharedState().statusStore()
        executions = status.executionsList()
        assert executions.size() > 0
        for i in range(executions.size()):
            e = executions.apply(i)
            seen.append(str(e.physicalPlanDescription()))
            seen.append(str(e.description()))
            seen.append(str(e.modifiedConfigs()))
        # The table's own files: versions, commit infos, checkpoints, metadata configuration.
        log_keys = [k for k in store.keys(url) if k.startswith("_transaction_log/")]
        assert any(k.endswith(".json") for k in log_keys)
        seen.extend(_read_object(spark, f"{url}/{k}") for k in log_keys)
    finally:
        sc.setLogLevel("WARN")
        driver_log = log.close()
    seen.append(driver_log)
    everything = "\n".join(seen)
    # Real texts: the log holds INFO lines of this very work, the plans name the table.
    assert " INFO io.indextables" in driver_log, driver_log[-2000:]
    assert "secrets" in everything
    for secret in store.secrets:
        assert secret not in everything


def _jvm_store(spark: SparkSession, url: str) -> tuple[Any, Any]:
    """The plugin's own LogStore for `url`, with the session's storage settings, and the path."""
    j = jvm(spark)
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    for k, v in _session_storage_conf(spark).items():
        conf.set(k, v)
    path = j.org.apache.hadoop.fs.Path(url)
    return j.io.indextables.spark.storage.LogStore.forPath(path, conf), path


def _read_object(spark: SparkSession, url: str) -> str:
    """An object's bytes, read through the plugin's own store with the session's settings."""
    store, path = _jvm_store(spark, url)
    return bytes(store.read(path)).decode("utf-8", errors="replace")


def _session_storage_conf(spark: SparkSession) -> dict[str, str]:
    keys = spark._jsparkSession.conf().getAll()
    it = keys.iterator()
    out: dict[str, str] = {}
    while it.hasNext():
        entry = it.next()
        k, v = str(entry._1()), str(entry._2())
        if k.startswith(("spark.indextables.aws.", "spark.indextables.azure.")):
            out[k] = v
    return out


# ---------------------------------------------------------------------------------------------
# Listing
# ---------------------------------------------------------------------------------------------


@pytest.mark.line_neutral
def test_listing_pages_through_thousands_of_objects(
    spark: SparkSession, store: Store, s3: S3Server, azure: AzureServer
) -> None:
    """More objects than one page holds (S3 pages hold 1,000 keys, Azure's 5,000): the store
    lists every one of them, directly under a directory and recursively."""
    url = store.new_table("many")
    count = 2_500 if store.kind == "s3" else 5_100
    names = [f"part-{i:06d}.split" for i in range(count)]
    if store.kind == "s3":
        bucket, prefix = url.split("/")[2], url.split("/", 3)[3]
        client = s3.client()

        def put(name: str) -> None:
            client.put_object(Bucket=bucket, Key=f"{prefix}/day=1/{name}", Body=b"x")

    else:
        container, prefix = url.split("://")[1].split("@")[0], url.split("/", 3)[3]
        service = azure.service()

        def put(name: str) -> None:
            blob = service.get_blob_client(container, f"{prefix}/day=1/{name}")
            blob.upload_blob(b"x")

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, names))
    jstore, path = _jvm_store(spark, url + "/day=1")
    listed = [p.rsplit("/", 1)[1] for p in str(jstore.list(path).mkString("\n")).split("\n")]
    assert listed == names
    _, root = _jvm_store(spark, url)
    assert str(jstore.listDirectories(root).mkString("\n")) == f"{url}/day=1"
    recursive = jstore.listRecursively(root)
    n = 0
    while recursive.hasNext():
        recursive.next()
        n += 1
    assert n == count


# ---------------------------------------------------------------------------------------------
# Tables written by IndexTables 0.5.4, copied into the store
# ---------------------------------------------------------------------------------------------


def test_interop_fixtures_read_the_same_from_the_store(
    spark: SparkSession, store: Store, s3: S3Server, azure: AzureServer, shared_data: Path
) -> None:
    fixtures = shared_data / "interop" / "indextables-0.5.4"
    if not fixtures.is_dir():
        pytest.skip(f"interop fixtures {fixtures} are absent")
    checked = 0
    for fixture in sorted(p for p in fixtures.iterdir() if (p / "_transaction_log").is_dir()):
        url = store.new_table(fixture.name)
        files = [f for f in fixture.rglob("*") if f.is_file()]
        if store.kind == "s3":
            bucket, prefix = url.split("/")[2], url.split("/", 3)[3]
            client = s3.client()
            for f in files:
                key = f"{prefix}/{f.relative_to(fixture).as_posix()}"
                client.put_object(Bucket=bucket, Key=key, Body=f.read_bytes())
        else:
            container, prefix = url.split("://")[1].split("@")[0], url.split("/", 3)[3]
            service = azure.service()
            for f in files:
                name = f"{prefix}/{f.relative_to(fixture).as_posix()}"
                service.get_blob_client(container, name).upload_blob(f.read_bytes())
        local = spark.read.format("indextables").load(str(fixture))
        remote = spark.read.format("indextables").load(url)
        assert_same_rows(remote, local)
        checked += 1
    assert checked >= 5
