package io.indextables.spark.stats

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.stats.SplitCounts.{NanCount, SignedNanCount, SubSecondCount}

/** Counts in the add's `stats`: written per column, merged, read back safely. */
class SplitCountsSuite extends AnyFunSuite {

  private val columns = Seq(
    0 -> StructField("d", DoubleType),
    1 -> StructField("f", FloatType),
    2 -> StructField("i", IntegerType),
    3 -> StructField("ts", TimestampType))

  test("a split counts NaN in floating columns and fractions of a second in timestamps") {
    val stats = new SplitStatistics(columns, 32)
    stats.update(InternalRow(Double.NaN, 1.0f, 1, 1000000L))
    stats.update(InternalRow(Double.PositiveInfinity, Float.NaN, 2, 1500000L))
    stats.update(InternalRow(Double.NaN, -0.0f, 3, -1000001L))
    stats.update(InternalRow(null, null, null, null))
    assert(SplitCounts.of(stats.statsJson, NanCount) == Map("d" -> 2L, "f" -> 1L))
    assert(SplitCounts.of(stats.statsJson, SubSecondCount) == Map("ts" -> 2L))
    assert(stats.maxValues("d") == "Infinity")
    val clean = new SplitStatistics(columns, 32)
    clean.update(InternalRow(1.5, 2.5f, 1, -3000000L))
    assert(SplitCounts.noneIn(clean.statsJson, NanCount) == Set("d", "f"))
    assert(SplitCounts.noneIn(clean.statsJson, SubSecondCount) == Set("ts"))
  }

  test("a merged split sums the counts every source records, and drops the others") {
    val a = SplitCounts.json(Map(
      NanCount -> Map("d" -> 0L, "f" -> 2L),
      SubSecondCount -> Map(
        "ts" -> 0L)))
    val b = SplitCounts.json(Map(NanCount -> Map("d" -> 0L)))
    assert(SplitCounts.of(SplitCounts.combine(Seq(a, a)), NanCount) == Map("d" -> 0L, "f" -> 4L))
    assert(SplitCounts.of(SplitCounts.combine(Seq(a, a)), SubSecondCount) == Map("ts" -> 0L))
    assert(SplitCounts.of(SplitCounts.combine(Seq(a, b)), NanCount) == Map("d" -> 0L))
    assert(SplitCounts.of(SplitCounts.combine(Seq(a, b)), SubSecondCount).isEmpty)
    assert(SplitCounts.combine(Seq(a, None)).isEmpty)
  }

  test("a split without the record, or with one that cannot be read, may hold any value") {
    assert(SplitCounts.noneIn(None, NanCount).isEmpty)
    assert(SplitCounts.noneIn(Some("not json"), NanCount).isEmpty)
    assert(SplitCounts.noneIn(Some("""{"numRecords": 3}"""), SubSecondCount).isEmpty)
    assert(SplitCounts.noneIn(Some("""{"nanCount": {"d": "x", "e": 0}}"""), NanCount) == Set("e"))
  }

  test("several kinds: the columns recorded as holding none of at least one of them") {
    val stats =
      Some("""{"nanCount": {"a": 0, "b": 2, "c": 1}, "signedNanCount": {"b": 0, "c": 1}}""")
    assert(SplitCounts.noneIn(stats, NanCount, SignedNanCount) == Set("a", "b"))
  }
}
