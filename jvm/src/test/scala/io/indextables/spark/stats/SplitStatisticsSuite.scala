package io.indextables.spark.stats

import java.time.{Instant, LocalDate}

import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

class SplitStatisticsSuite extends AnyFunSuite {

  private val schema = StructType(Seq(
    StructField("s", StringType),
    StructField("i", IntegerType),
    StructField("l", LongType),
    StructField("d", DoubleType),
    StructField("f", FloatType),
    StructField("dec", DecimalType(10, 2)),
    StructField("dt", DateType),
    StructField("ts", TimestampType),
    StructField("b", BooleanType),
    StructField("bin", BinaryType)
  ))

  private def stats(truncateAt: Int = 32) =
    SplitStatistics.forSchema(schema.fields.toSeq.zipWithIndex.map(_.swap), truncateAt)

  private def micros(s: String): Long = StatsValues.parseTimestamp(s)

  private def row(
      s: String,
      i: Any,
      l: Any,
      d: Any,
      f: Any,
      dec: String,
      dt: String,
      ts: String): GenericInternalRow = new GenericInternalRow(Array[Any](
    Option(s).map(UTF8String.fromString).orNull,
    i,
    l,
    d,
    f,
    Option(dec).map(x => Decimal(BigDecimal(x), 10, 2)).orNull,
    Option(dt).map(x => LocalDate.parse(x).toEpochDay.toInt).orNull,
    Option(ts).map(micros).orNull,
    true,
    Array[Byte](1, 2)
  ))

  test("min and max of every ordered type, rendered as the log stores them") {
    val st = stats()
    st.update(row("banana", 5, 50L, 2.5, 1.5f, "10.25", "2024-03-01", "2024-03-01T10:00:00Z"))
    st.update(
      row("apple", -3, 7L, -1.25, 3.5f, "-2.50", "2023-12-31", "2023-12-31T23:59:59.123456Z"))
    st.update(row("cherry", 12, -9L, 100.0, -0.5f, "3.00", "2024-01-15", "2024-06-30T00:00:00Z"))
    assert(st.minValues === Map(
      "s" -> "apple",
      "i" -> "-3",
      "l" -> "-9",
      "d" -> "-1.25",
      "f" -> "-0.5",
      "dec" -> "-2.50",
      "dt" -> "2023-12-31",
      "ts" -> "2023-12-31T23:59:59.123456Z"))
    assert(st.maxValues === Map(
      "s" -> "cherry",
      "i" -> "12",
      "l" -> "50",
      "d" -> "100.0",
      "f" -> "3.5",
      "dec" -> "10.25",
      "dt" -> "2024-03-01",
      "ts" -> "2024-06-30T00:00:00Z"))
  }

  test("columns without an order (boolean, binary) get no statistics") {
    val st = stats()
    st.update(row("a", 1, 1L, 1.0, 1.0f, "1.00", "2024-01-01", "2024-01-01T00:00:00Z"))
    assert(!st.minValues.contains("b") && !st.minValues.contains("bin"))
    assert(!st.maxValues.contains("b") && !st.maxValues.contains("bin"))
  }

  test("nulls are ignored, and an all-null column has no statistics") {
    val st = stats()
    st.update(row(null, null, 4L, null, null, null, null, null))
    st.update(row("x", 3, null, null, null, null, "2020-02-29", null))
    st.update(row(null, 1, 2L, null, null, null, null, null))
    assert(st.minValues === Map("s" -> "x", "i" -> "1", "l" -> "2", "dt" -> "2020-02-29"))
    assert(st.maxValues === Map("s" -> "x", "i" -> "3", "l" -> "4", "dt" -> "2020-02-29"))
  }

  test("NaN is left out of floating statistics") {
    val st = stats()
    st.update(row(null, null, null, Double.NaN, Float.NaN, null, null, null))
    assert(!st.minValues.contains("d") && !st.maxValues.contains("f"))
    st.update(row(null, null, null, 1.5, 2.5f, null, null, null))
    st.update(row(null, null, null, Double.NaN, Float.NaN, null, null, null))
    st.update(row(null, null, null, -4.0, -1.0f, null, null, null))
    assert(st.minValues("d") === "-4.0" && st.maxValues("d") === "1.5")
    assert(st.minValues("f") === "-1.0" && st.maxValues("f") === "2.5")
  }

  test("strings are compared by UTF-8 bytes, like Spark") {
    val st = stats()
    Seq("Zebra", "apple", "é", "\uD83D\uDE00").foreach { s =>
      st.update(row(s, null, null, null, null, null, null, null))
    }
    assert(st.minValues("s") === "Zebra")
    assert(st.maxValues("s") === "\uD83D\uDE00")
  }

  test("long strings are truncated to the configured number of characters") {
    val st = stats(truncateAt = 5)
    st.update(row("abcdefghij", null, null, null, null, null, null, null))
    st.update(row("abcz", null, null, null, null, null, null, null))
    assert(st.minValues("s") === "abcde")
    assert(st.maxValues("s") === "abcz")
    val at32 = stats()
    at32.update(row("x" * 40, null, null, null, null, null, null, null))
    assert(at32.minValues("s") === "x" * 32 && at32.maxValues("s") === "x" * 32)
  }

  test("statistics survive the writer reusing one UnsafeRow buffer for every row") {
    val st = SplitStatistics.forSchema(Seq(0 -> StructField("s", StringType)), 32)
    val project = UnsafeProjection.create(Array[DataType](StringType))
    Seq("mmm", "zzz", "aaa", "nnn").foreach { s =>
      st.update(project(new GenericInternalRow(Array[Any](UTF8String.fromString(s)))))
    }
    assert(st.minValues("s") === "aaa" && st.maxValues("s") === "zzz")
  }

  test("timestamps are ISO-8601 instants in UTC, including before the epoch") {
    val st = stats()
    st.update(row(null, null, null, null, null, null, null, "1969-12-31T23:59:59.5Z"))
    st.update(row(null, null, null, null, null, null, null, "2038-01-19T03:14:08Z"))
    assert(st.minValues("ts") === "1969-12-31T23:59:59.500Z")
    assert(st.maxValues("ts") === "2038-01-19T03:14:08Z")
    assert(StatsValues.formatTimestamp(-1L) === "1969-12-31T23:59:59.999999Z")
    assert(StatsValues.parseTimestamp(StatsValues.formatTimestamp(-1L)) === -1L)
    val now = Instant.parse("2024-05-06T07:08:09.123456Z")
    assert(StatsValues.parseTimestamp(now.toString) === now.getEpochSecond * 1000000L + 123456L)
  }

  test("dates are yyyy-MM-dd, including before the epoch") {
    val st = stats()
    st.update(row(null, null, null, null, null, null, "1900-01-01", null))
    st.update(row(null, null, null, null, null, null, "1970-01-01", null))
    assert(st.minValues("dt") === "1900-01-01" && st.maxValues("dt") === "1970-01-01")
  }

  test("tinyint and smallint get min and max as decimal numbers, over their whole range") {
    val small = StructType(Seq(StructField("t", ByteType), StructField("h", ShortType)))
    val st = SplitStatistics.forSchema(small.fields.toSeq.zipWithIndex.map(_.swap), 32)
    Seq[(Any, Any)]((-1.toByte, 9.toShort), (127.toByte, null), (null, -32768.toShort))
      .foreach { case (t, h) => st.update(new GenericInternalRow(Array[Any](t, h))) }
    st.update(new GenericInternalRow(Array[Any](-128.toByte, 32767.toShort)))
    assert(st.minValues === Map("t" -> "-128", "h" -> "-32768"))
    assert(st.maxValues === Map("t" -> "127", "h" -> "32767"))
  }

  test("hasStats covers exactly the ordered scalar types") {
    Seq(
      StringType,
      ByteType,
      ShortType,
      IntegerType,
      LongType,
      DoubleType,
      FloatType,
      DateType,
      TimestampType,
      DecimalType(38, 10)).foreach(dt => assert(StatsValues.hasStats(dt), dt))
    Seq(
      BooleanType,
      BinaryType,
      ArrayType(LongType),
      StructType(Nil),
      MapType(StringType, StringType)).foreach(dt => assert(!StatsValues.hasStats(dt), dt))
  }

  test("large and tiny floating values are written in plain decimal notation") {
    val st = stats()
    st.update(row("a", 1, 1L, 1.0e10, 1.0e-7f, "1.00", "2024-01-01", "2024-01-01T00:00:00Z"))
    st.update(row("a", 1, 1L, 1.0e-7, 3.0e9f, "1.00", "2024-01-01", "2024-01-01T00:00:00Z"))
    assert(st.maxValues("d") === "10000000000")
    assert(st.minValues("d") === "0.00000010")
    assert(st.minValues("f") === "0.00000010")
    assert(st.maxValues("f") === "3000000000")
  }
}
