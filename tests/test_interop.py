"""Tables written by IndexTables 0.5.4 (../shared/data/interop) read through format("indextables").

Each fixture's expected rows come from its README and from the data the fixture holds: the
latest version through the Avro state its _last_checkpoint names, earlier versions through the
older state directories the log still holds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

INTEROP = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "interop"
FIXTURES = INTEROP / "indextables-0.5.4"

# fixture -> (latest version, row count)
EXPECTED = {
    "01_single_write": (1, 3),
    "02_five_appends": (5, 50),
    "03_with_removes": (4, 1),
    "04_partitioned": (1, 5),
    "06_schema_dedup": (12, 60),
    "14_after_merge": (5, 40),
    "16_with_skip_actions": (6, 30),
}


@pytest.fixture(scope="module")
def fixtures() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"interop fixtures {FIXTURES} are absent (they are not part of the repo)")
    return FIXTURES


def _read(spark: SparkSession, path: Path, **options: str) -> DataFrame:
    reader = spark.read.format("indextables")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_fixture_reads_its_rows(spark: SparkSession, fixtures: Path, name: str) -> None:
    _version, count = EXPECTED[name]
    df = _read(spark, fixtures / name)
    rows = df.collect()
    assert len(rows) == count
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == count


def test_single_write_values(spark: SparkSession, fixtures: Path) -> None:
    rows = sorted(_read(spark, fixtures / "01_single_write").collect(), key=lambda r: r["id"])
    assert [(r["id"], r["text"], r["score"]) for r in rows] == [
        (1, "hello", 100.0),
        (2, "world", 200.0),
        (3, "test", 300.0),
    ]


def test_five_appends_hold_every_batch(spark: SparkSession, fixtures: Path) -> None:
    df = _read(spark, fixtures / "02_five_appends")
    ids = {r["id"] for r in df.collect()}
    assert ids == {b * 100 + i for b in range(1, 6) for i in range(1, 11)}
    assert df.filter("text = 'batch3_item7'").collect()[0]["score"] == 37.0


def test_overwrite_leaves_only_the_replacement(spark: SparkSession, fixtures: Path) -> None:
    rows = _read(spark, fixtures / "03_with_removes").collect()
    assert [(r["id"], r["text"]) for r in rows] == [(999, "replacement")]


def test_partitioned_fixture_prunes_by_date(spark: SparkSession, fixtures: Path) -> None:
    df = _read(spark, fixtures / "04_partitioned")
    day2 = sorted(r["id"] for r in df.filter("date = '2024-01-02'").collect())
    assert day2 == [3, 4]
    assert df.filter("date = '2024-01-03'").collect()[0]["text"] == "doc5"


def test_schema_dedup_fixture_resolves_its_registry(spark: SparkSession, fixtures: Path) -> None:
    df = _read(spark, fixtures / "06_schema_dedup")
    row = df.filter("id = 705").collect()[0]
    assert (row["title"], row["body"], row["rating"]) == ("Title 7-5", "Body for 7-5", 7.5)


def test_merged_fixture_reads_the_merged_split(spark: SparkSession, fixtures: Path) -> None:
    df = _read(spark, fixtures / "14_after_merge")
    assert df.filter("text = 'merge_batch1_item1'").collect()[0]["score"] == 6.0


def test_skip_actions_fixture_reads_every_batch(spark: SparkSession, fixtures: Path) -> None:
    df = _read(spark, fixtures / "16_with_skip_actions")
    assert {r["id"] // 100 for r in df.collect()} == {1, 2, 3, 4, 5, 6}


def test_earlier_versions_read_through_older_states(spark: SparkSession, fixtures: Path) -> None:
    path = fixtures / "02_five_appends"
    for version in range(1, 6):
        df = _read(spark, path, versionAsOf=str(version))
        assert df.count() == 10 * version
    before_overwrite = _read(spark, fixtures / "03_with_removes", versionAsOf="3")
    assert 999 not in {r["id"] for r in before_overwrite.collect()}
    assert _read(spark, fixtures / "14_after_merge", versionAsOf="4").count() == 40


def test_version_zero_is_the_empty_table(spark: SparkSession, fixtures: Path) -> None:
    assert _read(spark, fixtures / "01_single_write", versionAsOf="0").count() == 0


def test_a_version_past_the_latest_is_a_clear_error(spark: SparkSession, fixtures: Path) -> None:
    with pytest.raises(Exception, match="Version 99"):
        _read(spark, fixtures / "01_single_write", versionAsOf="99").collect()
