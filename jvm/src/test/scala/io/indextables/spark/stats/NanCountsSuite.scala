package io.indextables.spark.stats

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/** NaN counts in the add's `stats`: written per floating column, merged, read back safely. */
class NanCountsSuite extends AnyFunSuite {

  test("a split counts the NaN values of each floating column, never of other columns") {
    val columns = Seq(
      0 -> StructField("d", DoubleType),
      1 -> StructField("f", FloatType),
      2 -> StructField("i", IntegerType))
    val stats = new SplitStatistics(columns, 32)
    stats.update(InternalRow(Double.NaN, 1.0f, 1))
    stats.update(InternalRow(Double.PositiveInfinity, Float.NaN, 2))
    stats.update(InternalRow(Double.NaN, -0.0f, 3))
    stats.update(InternalRow(null, null, null))
    assert(NanCounts.of(stats.statsJson) == Map("d" -> 2L, "f" -> 1L))
    assert(stats.maxValues("d") == "Infinity")
    val clean = new SplitStatistics(columns, 32)
    clean.update(InternalRow(1.5, 2.5f, 1))
    assert(NanCounts.nanFree(clean.statsJson) == Set("d", "f"))
  }

  test("a merged split sums the counts every source records, and drops the others") {
    val a = NanCounts.json(Map("d" -> 0L, "f" -> 2L))
    val b = NanCounts.json(Map("d" -> 0L))
    assert(NanCounts.of(NanCounts.combine(Seq(a, a))) == Map("d" -> 0L, "f" -> 4L))
    assert(NanCounts.of(NanCounts.combine(Seq(a, b))) == Map("d" -> 0L))
    assert(NanCounts.combine(Seq(a, None)).isEmpty)
  }

  test("a split without the record, or with one that cannot be read, may hold NaN anywhere") {
    assert(NanCounts.nanFree(None).isEmpty)
    assert(NanCounts.nanFree(Some("not json")).isEmpty)
    assert(NanCounts.nanFree(Some("""{"numRecords": 3}""")).isEmpty)
    assert(NanCounts.nanFree(Some("""{"nanCount": {"d": "x", "e": 0}}""")) == Set("e"))
  }
}
