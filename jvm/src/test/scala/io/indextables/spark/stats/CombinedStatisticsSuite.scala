package io.indextables.spark.stats

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/** The statistics of a merged split: typed orderings, all-null columns, missing statistics. */
class CombinedStatisticsSuite extends AnyFunSuite {

  private val schema = StructType(Seq(
    StructField("i", IntegerType),
    StructField("d", DoubleType),
    StructField("s", StringType),
    StructField("dt", DateType),
    StructField("ts", TimestampType),
    StructField("dec", DecimalType(10, 2))
  ))

  test("numbers, dates and timestamps compare as their type orders them, not as text") {
    val a = Map(
      "i" -> "9",
      "d" -> "-0.5",
      "s" -> "b",
      "dt" -> "2024-01-09",
      "ts" -> "2024-01-01T00:00:00.5Z",
      "dec" -> "9.50")
    val b = Map(
      "i" -> "10",
      "d" -> "-10.25",
      "s" -> "ab",
      "dt" -> "2024-01-10",
      "ts" -> "2024-01-01T00:00:00Z",
      "dec" -> "10.00")
    val Some((min, max)) =
      CombinedStatistics.combine(schema, Seq((Some(a), Some(a)), (Some(b), Some(b))))
    assert(min == Map(
      "i" -> "9",
      "d" -> "-10.25",
      "s" -> "ab",
      "dt" -> "2024-01-09",
      "ts" -> "2024-01-01T00:00:00Z",
      "dec" -> "9.50"))
    assert(max == Map(
      "i" -> "10",
      "d" -> "-0.5",
      "s" -> "b",
      "dt" -> "2024-01-10",
      "ts" -> "2024-01-01T00:00:00.5Z",
      "dec" -> "10.00"))
  }

  test("tinyint and smallint statistics compare as numbers (a merge keeps -128, not -1)") {
    val small = StructType(Seq(StructField("t", ByteType), StructField("h", ShortType)))
    val Some((min, max)) = CombinedStatistics.combine(
      small,
      Seq(
        (Some(Map("t" -> "-1", "h" -> "9")), Some(Map("t" -> "9", "h" -> "9"))),
        (Some(Map("t" -> "-128", "h" -> "-32768")), Some(Map("t" -> "127", "h" -> "32767")))))
    assert(min == Map("t" -> "-128", "h" -> "-32768"))
    assert(max == Map("t" -> "127", "h" -> "32767"))
  }

  test("a column one split has no value for takes the others'; strings order by UTF-8 bytes") {
    val Some((min, max)) = CombinedStatistics.combine(
      schema,
      Seq(
        (Some(Map("s" -> "\uFF21")), Some(Map("s" -> "\uFF21"))),
        (
          Some(Map("i" -> "3", "s" -> "\uD83D\uDE00")),
          Some(Map("i" -> "4", "s" -> "\uD83D\uDE00")))))
    assert(min == Map("i" -> "3", "s" -> "\uFF21") && max == Map("i" -> "4", "s" -> "\uD83D\uDE00"))
  }

  test("a source without statistics leaves the merged split without any") {
    assert(CombinedStatistics.combine(
      schema,
      Seq(
        (Some(Map("i" -> "1")), Some(Map("i" -> "1"))),
        (None, None))).isEmpty)
  }
}
