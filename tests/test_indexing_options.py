"""Upstream's indexing and write options, each honoured (with its effect on the answers) or
refused with an error that names it; the `ip` kind, map columns, wide decimals and filters on
struct fields. Every answer is checked against the same query on a Parquet copy of the data.
"""

from __future__ import annotations

import ipaddress
import re
from decimal import Decimal

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import (
    TYPEMAP,
    assert_same_rows,
    error_text,
    jvm,
    read_table,
    scan_node,
    write_table,
)

pytestmark = pytest.mark.usefixtures("layout")

INDEXING = "spark.indextables.indexing."

WORDS = [
    "Running dogs quickly",
    "The dog runs",
    "RUN fast",
    "a cat sleeps",
    "Cats are running",
    "Dog-Run open",
]


def _history_versions(spark: SparkSession, path: str) -> list[int]:
    return [r.version for r in spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{path}'").collect()]


def _pushed(df: DataFrame) -> str:
    match = re.search(r"PushedFilters: \[(.*?)\], ", scan_node(df))
    assert match, scan_node(df)
    return match.group(1)


def _ids(df: DataFrame) -> list[int]:
    return sorted(r.id for r in df.select("id").collect())


@pytest.fixture(scope="module")
def words_df(spark: SparkSession) -> DataFrame:
    rows = [(i, WORDS[i % len(WORDS)], f"w{i % 7}", float(i), str(i % 3)) for i in range(60)]
    return spark.createDataFrame(rows, "id long, msg string, tag string, score double, code string")


# ---- sizes and names --------------------------------------------------------------------------


def test_heap_size_takes_units_and_the_upstream_batch_size_name(
    spark: SparkSession, words_df: DataFrame, tmp_table: str
) -> None:
    write_table(
        words_df,
        tmp_table,
        options={
            "spark.indextables.indexWriter.heapSize": "100M",
            "spark.indextables.write.arrowFfi.batchSize": "7",
        },
    )
    assert_same_rows(read_table(spark, tmp_table), words_df)
    for key, value in [
        ("spark.indextables.indexWriter.heapSize", "100MB"),
        ("spark.indextables.indexWriter.heapSize", "1k"),
        ("spark.indextables.write.arrowFfi.batchSize", "0"),
    ]:
        with pytest.raises(Exception) as err:
            write_table(words_df, tmp_table + key + value, options={key: value})
        assert "INDEXTABLES_INVALID_OPTION" in error_text(err.value)
        assert key in error_text(err.value) and value in error_text(err.value)


def test_an_unknown_option_fails_naming_close_matches_unless_strict_options_is_off(
    spark: SparkSession, words_df: DataFrame, tmp_table: str
) -> None:
    with pytest.raises(Exception) as err:
        write_table(words_df, tmp_table, options={"spark.indextables.indexWriter.heapSze": "1G"})
    text = error_text(err.value)
    assert "INDEXTABLES_UNKNOWN_OPTION" in text
    assert "spark.indextables.indexWriter.heapSize" in text
    with pytest.raises(Exception) as err:
        write_table(words_df, tmp_table, options={INDEXING + "fastfeilds": "tag"})
    assert "spark.indextables.indexing.fastfields" in error_text(err.value)
    assert not _exists(spark, tmp_table)
    write_table(
        words_df,
        tmp_table,
        options={
            "spark.indextables.indexWriter.heapSze": "1G",
            "spark.indextables.write.strictOptions": "false",
        },
    )
    assert_same_rows(read_table(spark, tmp_table), words_df)


def _exists(spark: SparkSession, path: str) -> bool:
    try:
        read_table(spark, path).count()
    except Exception:  # noqa: BLE001 (any failure means there is no table)
        return False
    return True


# ---- index types, tokenizers, field lists -----------------------------------------------------


def test_the_list_form_of_the_typemap_makes_each_listed_column_text(
    spark: SparkSession, words_df: DataFrame, tmp_table: str
) -> None:
    write_table(words_df, tmp_table, options={TYPEMAP + "text": "msg, tag"})
    read_table(spark, tmp_table).createOrReplaceTempView("list_typemap")
    got = spark.sql("SELECT id FROM list_typemap WHERE msg indexquery 'dogs'")
    assert _ids(got) == _ids(words_df.filter(F.lower("msg").contains("dogs")))
    # Tokenized: a word matches inside the value, which a raw string would not.
    assert _ids(spark.sql("SELECT id FROM list_typemap WHERE tag indexquery 'w3'")) == _ids(
        words_df.filter(F.col("tag") == "w3")
    )
    config = _configuration(spark, tmp_table)
    assert config[TYPEMAP + "msg"] == "text" and config[TYPEMAP + "tag"] == "text"


def _configuration(spark: SparkSession, path: str) -> dict[str, str]:
    j = jvm(spark)
    log_class = j.io.indextables.spark.transaction.TransactionLog
    log = log_class.forTable(
        path,
        spark._jsc.hadoopConfiguration(),
        j.io.indextables.spark.config.IndexTablesOptions.Defaults().logSettings(),
        getattr(log_class, "forTable$default$4")(),
    )
    conf = log.snapshot().metadata().configuration()
    out: dict[str, str] = {}
    it = conf.iterator()
    while it.hasNext():
        entry = it.next()
        out[entry._1()] = entry._2()
    return out


def _words(text: str) -> list[str]:
    """The tokens of tantivy's default tokenizer: runs of letters and digits, lower-cased."""
    return re.split(r"[^a-z0-9]+", text.lower())


@pytest.mark.parametrize(
    ("tokenizer", "query", "expected"),
    [
        # en_stem: running, runs and run are one stem; default keeps the words whole.
        ("en_stem", "run", lambda m: any(w.startswith("run") for w in _words(m))),
        ("default", "run", lambda m: "run" in _words(m)),
        # whitespace cuts at spaces only (tantivy4java lower-cases what it indexes, not the query):
        # "dog-run" is one word, so "dog" does not match it.
        ("whitespace", "dog", lambda m: "dog" in m.lower().split()),
    ],
)
def test_a_tokenizer_per_column_decides_what_a_word_matches(
    spark: SparkSession,
    words_df: DataFrame,
    tmp_table: str,
    tokenizer: str,
    query: str,
    expected: object,
) -> None:
    write_table(words_df, tmp_table, options={INDEXING + "tokenizer.msg": tokenizer})
    table = read_table(spark, tmp_table)
    table.createOrReplaceTempView("tokenized")
    got = _ids(spark.sql(f"SELECT id FROM tokenized WHERE msg indexquery '{query}'"))
    assert callable(expected)
    want = sorted(r.id for r in words_df.collect() if expected(r.msg))
    assert got == want and got
    # SQL equality keeps its meaning whatever the tokenizer.
    value = WORDS[1]
    assert_same_rows(table.filter(F.col("msg") == value), words_df.filter(F.col("msg") == value))


def test_the_tokenizer_list_form_and_a_bad_tokenizer(
    spark: SparkSession, words_df: DataFrame, tmp_table: str
) -> None:
    write_table(words_df, tmp_table, options={INDEXING + "tokenizer.en_stem": "msg"})
    read_table(spark, tmp_table).createOrReplaceTempView("stemmed")
    assert _ids(spark.sql("SELECT id FROM stemmed WHERE msg indexquery 'cat'")) == _ids(
        words_df.filter(F.lower("msg").contains("cat"))
    )
    with pytest.raises(Exception) as err:
        write_table(words_df, tmp_table + "2", options={INDEXING + "tokenizer.msg": "klingon"})
    assert "klingon" in error_text(err.value) and "tokenizer.msg" in error_text(err.value)


def test_field_lists_change_what_is_stored_searched_and_fast(
    spark: SparkSession, words_df: DataFrame, tmp_table: str, layout: str
) -> None:
    options = {
        INDEXING + "indexonlyfields": "code",
        INDEXING + "storeonlyfields": "tag",
        INDEXING + "nonfastfields": "score",
        INDEXING + "fastfields": "msg",
        TYPEMAP + "msg": "text",
    }
    if layout == "companion":
        # Its index is built from the Parquet files, which hold every column: an index-only
        # column cannot be, and the write says so before anything is written.
        with pytest.raises(Exception) as refused:
            write_table(words_df, tmp_table, options=options)
        assert "INDEXTABLES_COMPANION_INDEX_ONLY" in error_text(refused.value)
        assert "'code'" in error_text(refused.value)
        return
    write_table(words_df, tmp_table, options=options)
    table = read_table(spark, tmp_table)
    # Index-only: never read back, but searched: its filters are answered from the index.
    assert {r.code for r in table.select("code").collect()} == {None}
    assert table.filter(F.col("code").isNotNull()).count() == words_df.count()
    only_code = table.filter(F.col("code") == "1")
    assert "EqualTo(code,1)" in _pushed(only_code)
    assert _ids(only_code) == _ids(words_df.filter(F.col("code") == "1"))
    with pytest.raises(Exception) as err:
        table.filter(F.col("code").contains("1")).collect()
    assert "INDEXTABLES_INDEX_ONLY_FILTER" in error_text(err.value)
    # Store-only: read back, filtered by Spark (the index cannot search it).
    assert_same_rows(table.drop("code"), words_df.drop("code"))
    by_tag = table.filter(F.col("tag") == "w2")
    assert "EqualTo(tag" not in _pushed(by_tag)
    assert _ids(by_tag) == _ids(words_df.filter(F.col("tag") == "w2"))
    # Not fast: a range stays with Spark (tantivy ranges need fast fields); the answer holds.
    ranged = table.filter((F.col("score") > 10.5) & (F.col("score") < 20.5))
    assert "GreaterThan(score" not in _pushed(ranged)
    assert _ids(ranged) == _ids(words_df.filter((F.col("score") > 10.5) & (F.col("score") < 20.5)))
    mapping = _doc_mapping(spark, tmp_table)
    assert (mapping["code"]["stored"], mapping["code"]["indexed"]) == (False, True)
    assert (mapping["tag"]["stored"], mapping["tag"]["indexed"]) == (True, False)
    assert mapping["score"]["fast"] is False and mapping["msg"]["fast"] is True
    with pytest.raises(Exception) as err:
        write_table(
            words_df,
            tmp_table + "2",
            options={INDEXING + "fastfields": "tag", INDEXING + "nonfastfields": "tag"},
        )
    assert "tag" in error_text(err.value) and "nonfastfields" in error_text(err.value)
    with pytest.raises(Exception) as err:
        write_table(words_df, tmp_table + "3", options={INDEXING + "fastfields": "nope"})
    assert "'nope'" in error_text(err.value)


def _doc_mapping(spark: SparkSession, path: str) -> dict[str, dict[str, object]]:
    import json

    config = _configuration(spark, path)
    mappings = [v for k, v in config.items() if k.startswith("docMappingSchema.")]
    assert mappings, config
    return {f["name"]: f for f in json.loads(mappings[0])}


# ---- ip, map, decimal --------------------------------------------------------------------------

ADDRESSES = ["10.0.0.1", "10.0.0.255", "10.0.1.0", "192.168.7.9", "2001:db8::1", "2001:db9::", None]


def test_ip_addresses_read_back_exactly_and_filter_like_parquet(
    spark: SparkSession, tmp_table: str, tmp_path: object, layout: str
) -> None:
    df = spark.createDataFrame(
        [(i, ADDRESSES[i % len(ADDRESSES)]) for i in range(70)], "id long, addr string"
    )
    if layout == "companion":
        # Not yet on the companion layout: refused, naming the column, rather than misanswered.
        with pytest.raises(Exception) as refused:
            write_table(df, tmp_table, options={TYPEMAP + "addr": "ip"})
        assert "INDEXTABLES_COMPANION_IP_UNSUPPORTED" in error_text(refused.value)
        assert "'addr'" in error_text(refused.value)
        return
    write_table(df, tmp_table, options={TYPEMAP + "addr": "ip"})
    table = read_table(spark, tmp_table)
    assert_same_rows(table, df)
    for cond in [
        F.col("addr") == "10.0.0.255",
        F.col("addr").isin("2001:db8::1", "192.168.7.9"),
        F.col("addr").isNull(),
        F.col("addr") > "10.0.0.5",  # string order, as Spark defines it: left to Spark
        F.col("addr") == "10.0.0.01",  # another spelling: no address equals it as a string
    ]:
        assert_same_rows(table.filter(cond), df.filter(cond))
    assert "EqualTo(addr,10.0.0.255)" in _pushed(table.filter(F.col("addr") == "10.0.0.255"))
    table.createOrReplaceTempView("addresses")
    rows = df.collect()

    def within(network: str) -> list[int]:
        net = ipaddress.ip_network(network)
        return sorted(
            r.id
            for r in rows
            if r.addr is not None
            and ipaddress.ip_address(r.addr).version == net.version
            and ipaddress.ip_address(r.addr) in net
        )

    for query, network in [
        ("addr:[10.0.0.0 TO 10.0.0.255]", "10.0.0.0/24"),
        ("addr:10.0.0.0/24", "10.0.0.0/24"),
        ("10.0.0.0/16", "10.0.0.0/16"),
        ("addr:2001:db8::/32", "2001:db8::/32"),
    ]:
        got = spark.sql(f"SELECT id FROM addresses WHERE addr indexquery '{query}'")
        assert _ids(got) == within(network), query
    with pytest.raises(Exception) as err:
        write_table(
            spark.createDataFrame([(1, "10.0.0.01")], "id long, addr string"),
            tmp_table,
            mode="append",
        )
    assert "INDEXTABLES_INVALID_IP" in error_text(err.value)
    assert "'10.0.0.1'" in error_text(err.value)
    assert _history_versions(spark, tmp_table) == [0]


def test_map_columns_are_stored_as_json_and_read_back(spark: SparkSession, tmp_table: str) -> None:
    df = spark.sql(
        "SELECT id, CASE WHEN id % 4 = 0 THEN NULL ELSE map('k' || id, id, 'z', id * 2) END AS m,"
        " named_struct('tags', map('env', 'prod', 'id', cast(id AS string))) AS s"
        " FROM range(40)"
    )
    write_table(df, tmp_table)
    table = read_table(spark, tmp_table)
    assert_same_rows(table, df)
    assert_same_rows(table.filter(F.col("m").isNull()), df.filter(F.col("m").isNull()))
    assert_same_rows(
        table.filter(F.col("m")["z"] == 10).select("id"),
        df.filter(F.col("m")["z"] == 10).select("id"),
    )
    with pytest.raises(Exception) as err:
        write_table(spark.sql("SELECT map(1, 'a') AS m"), tmp_table + "2")
    assert "Column 'm'" in error_text(err.value) and "map<int,string>" in error_text(err.value)


def test_a_decimal_beyond_15_digits_is_refused_and_smaller_ones_are_exact(
    spark: SparkSession, tmp_table: str
) -> None:
    small = spark.createDataFrame(
        [(1, Decimal("1234567890123.45")), (2, Decimal("-0.01"))], "id long, d decimal(15,2)"
    )
    write_table(small, tmp_table)
    assert_same_rows(read_table(spark, tmp_table), small)
    wide = spark.createDataFrame([(3, Decimal("12345678901234567.89"))], "id long, d decimal(19,2)")
    with pytest.raises(Exception) as err:
        write_table(wide, tmp_table + "2")
    text = error_text(err.value)
    assert "INDEXTABLES_UNSUPPORTED_TYPE" in text
    assert "Column 'd'" in text and "decimal(19,2)" in text
    with pytest.raises(Exception) as err:
        write_table(wide, tmp_table, mode="append")
    text = error_text(err.value)
    assert "column 'd'" in text and "decimal(15,2)" in text and "decimal(19,2)" in text
    assert _history_versions(spark, tmp_table) == [0]


# ---- struct field filters ---------------------------------------------------------------------


@pytest.mark.parametrize("text_column", [False, True], ids=["arrow-ffi", "batch-documents"])
def test_filters_on_struct_fields_are_pushed_and_exact(
    spark: SparkSession, tmp_table: str, tmp_path: object, text_column: bool, layout: str
) -> None:
    df = spark.sql(
        "SELECT id, named_struct("
        "  's', CASE WHEN id % 3 = 0 THEN NULL ELSE 'v' || (id % 5) END,"
        "  'x', id % 7, 'b', id % 2 = 0,"
        "  'inner', named_struct('y', id % 4, 'z', 'Z ' || id)) AS st,"
        " CASE WHEN id % 11 = 0 THEN NULL ELSE named_struct('a', id) END AS st2,"
        " 'note ' || id AS note"
        " FROM range(300)"
    )
    options = {TYPEMAP + "note": "text"} if text_column else {}
    write_table(df, tmp_table, options=options)
    table = read_table(spark, tmp_table)
    pushed_always = [
        ("st.x = 3", "EqualTo(st.x,3)"),
        ("st.b = true", "EqualTo(st.b,true)"),
        ("st.inner.y = 2", "EqualTo(st.inner.y,2)"),
        ("st2.a = 22", "EqualTo(st2.a,22)"),
    ]
    # Strings of a struct written by the Arrow FFI path, or indexed from Parquet on the
    # companion layout, are tokenized: those stay with Spark.
    string_filters = [("st.s = 'v1'", "EqualTo(st.s,v1)"), ("st.inner.z = 'Z 17'", None)]
    raw_strings = text_column and layout == "splits"
    for cond, pushed in pushed_always + string_filters:
        assert_same_rows(table.filter(cond), df.filter(cond))
        if pushed and (raw_strings or not cond.startswith("st.s")):
            assert pushed in _pushed(table.filter(cond)), cond
    for cond in ["st.s IN ('v1', 'v2')", "NOT (st.s = 'v1')", "st.x > 3", "st.s IS NULL"]:
        assert_same_rows(table.filter(cond), df.filter(cond))
