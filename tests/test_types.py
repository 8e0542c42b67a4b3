"""Every supported Spark type round-trips unchanged; unsupported types fail before writing."""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal

import pytest
from pyspark.sql import Row, SparkSession

from helpers import assert_same_rows, error_text, read_table, split_files, write_table

pytestmark = pytest.mark.usefixtures("layout")

ALL_TYPES = (
    "id long, s string, l long, i int, d double, f float, b boolean, ts timestamp, day date, "
    "amount decimal(10,2), raw binary, st struct<a:int,b:string>, tags array<string>"
)


def _all_types_rows() -> list[tuple[object, ...]]:
    return [
        (
            0,
            "plain text",
            9_007_199_254_740_993,
            2_147_483_647,
            3.141592653589793,
            1.5,
            True,
            dt.datetime(2024, 3, 1, 12, 30, 45, 123456),
            dt.date(2024, 3, 1),
            Decimal("12345678.90"),
            bytearray(b"\x00\x01\xfe\xff"),
            Row(a=1, b="one"),
            ["alpha", "beta"],
        ),
        (
            1,
            "",
            -9_223_372_036_854_775_808,
            -2_147_483_648,
            -0.25,
            -2.25,
            False,
            dt.datetime(1970, 1, 1, 0, 0, 0),
            dt.date(1969, 12, 31),
            Decimal("-0.01"),
            bytearray(b""),
            Row(a=None, b=None),
            [],
        ),
        (
            2,
            "unicodé ☃ 日本",
            9_223_372_036_854_775_807,
            0,
            1e300,
            3.0e38,
            True,
            dt.datetime(2099, 12, 31, 23, 59, 59, 999999),
            dt.date(2099, 12, 31),
            Decimal("99999999.99"),
            bytearray(range(256)),
            Row(a=-5, b="x y"),
            ["a", "", "a"],
        ),
        (3, None, None, None, None, None, None, None, None, None, None, None, None),
        (
            4,
            "tags hold a null",
            0,
            0,
            0.0,
            0.0,
            False,
            None,
            None,
            Decimal("0.00"),
            None,
            Row(a=2, b=None),
            ["x", None],
        ),
    ]


def test_every_supported_type_round_trips_with_nulls(spark: SparkSession, tmp_table: str) -> None:
    df = spark.createDataFrame(_all_types_rows(), ALL_TYPES)
    write_table(df, tmp_table)
    got = read_table(spark, tmp_table)
    assert {f.name: f.dataType for f in got.schema.fields} == {
        f.name: f.dataType for f in df.schema.fields
    }
    assert_same_rows(got, df)


@pytest.mark.parametrize("column", ["l", "i", "d", "b", "ts", "day", "amount"])
def test_each_typed_column_filters_like_spark(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, column: str
) -> None:
    df = spark.createDataFrame(_all_types_rows(), ALL_TYPES)
    path = str(tmp_path_factory.mktemp("typed") / "table")
    write_table(df, path)
    got = read_table(spark, path)
    for cond in (f"{column} IS NULL", f"{column} IS NOT NULL"):
        assert_same_rows(got.filter(cond), df.filter(cond))
    first = df.filter("id = 0").select(column).first()
    assert first is not None
    value = first[0]
    cond_col = got[column] == value
    assert_same_rows(got.filter(cond_col), df.filter(df[column] == value))


@pytest.mark.parametrize(
    ("ddl", "rows", "type_names"),
    [
        ("id long, counts map<int,int>", [(1, {1: 1})], ("map<int,int>", "maptype", "map")),
        ("id long, amount decimal(20,2)", [(1, None)], ("decimal(20,2)",)),
        ("id long, small array<short>", [(1, [7])], ("smallint", "short", "shorttype")),
    ],
    ids=["map-with-int-keys", "wide-decimal", "nested-short"],
)
def test_unsupported_type_fails_before_writing_and_names_column_and_type(
    spark: SparkSession,
    tmp_table: str,
    ddl: str,
    rows: list[tuple[object, ...]],
    type_names: tuple[str, ...],
) -> None:
    df = spark.createDataFrame(rows, ddl)
    column = df.columns[1]
    with pytest.raises(Exception) as info:
        write_table(df, tmp_table)
    text = error_text(info.value)
    message = str(info.value)
    assert column in message, text
    assert any(name in message.lower() for name in type_names), text
    assert not os.path.exists(os.path.join(tmp_table, "_transaction_log"))
    assert split_files(tmp_table) == []
