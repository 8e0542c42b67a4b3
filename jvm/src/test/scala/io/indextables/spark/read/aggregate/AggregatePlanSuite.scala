package io.indextables.spark.read.aggregate

import org.apache.spark.sql.connector.expressions.{Expression, Expressions}
import org.apache.spark.sql.connector.expressions.aggregate._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.read.aggregate.PushedMetric._
import io.indextables.spark.schema.{IndexKind, IndexedField, TableIndexSchema}

/** Which aggregations a split answers, and the partial values it computes from rows. */
class AggregatePlanSuite extends AnyFunSuite {

  private val tableSchema = StructType(Seq(
    StructField("s", StringType),
    StructField("msg", StringType),
    StructField("i", IntegerType),
    StructField("l", LongType),
    StructField("d", DoubleType),
    StructField("dec", DecimalType(10, 2)),
    StructField("dt", DateType),
    StructField("ts", TimestampType),
    StructField("b", BooleanType),
    StructField("slow", LongType),
    StructField("t", ByteType),
    StructField("h", ShortType),
    StructField("p", StringType)
  ))

  private val schema = TableIndexSchema(
    tableSchema,
    Seq("p"),
    Seq(
      IndexedField("s", StringType, IndexKind.RawString),
      IndexedField("msg", StringType, IndexKind.Text, Some("default"), fast = false),
      IndexedField("i", IntegerType, IndexKind.I64),
      IndexedField("l", LongType, IndexKind.I64),
      IndexedField("d", DoubleType, IndexKind.F64),
      IndexedField("dec", DecimalType(10, 2), IndexKind.F64),
      IndexedField("dt", DateType, IndexKind.DateTime),
      IndexedField("ts", TimestampType, IndexKind.DateTime),
      IndexedField("b", BooleanType, IndexKind.Bool),
      IndexedField("slow", LongType, IndexKind.I64, fast = false),
      IndexedField("t", ByteType, IndexKind.I64),
      IndexedField("h", ShortType, IndexKind.I64)
    )
  )

  private def ref(c: String) = Expressions.column(c)

  private def plan(
      aggs: Seq[AggregateFunc],
      groups: Seq[String] = Nil,
      exact: String => Boolean = _ => true) =
    AggregatePlan.of(
      new Aggregation(aggs.toArray, groups.map(ref).toArray[Expression]),
      schema,
      tableSchema,
      exact)

  test("every metric of fast numeric and date columns is pushed, in Spark's order") {
    val p = plan(
      Seq(
        new CountStar(),
        new Count(ref("b"), false),
        new Sum(ref("l"), false),
        new Min(ref("d")),
        new Max(ref("dt")),
        new Sum(ref("i"), false)),
      Seq("p", "s", "i", "b", "dt")
    ).get
    assert(p.metrics === Seq(
      CountAll,
      CountOf("b"),
      SumOf("l", LongType),
      MinOf("d", DoubleType),
      MaxOf("dt", DateType),
      SumOf("i", IntegerType)))
    assert(p.groupBy.map(g => (g.name, g.isPartition)) ===
      Seq(("p", true), ("s", false), ("i", false), ("b", false), ("dt", false)))
    assert(p.schema.map(_.dataType) === Seq(
      StringType,
      StringType,
      IntegerType,
      BooleanType,
      DateType,
      LongType,
      LongType,
      LongType,
      DoubleType,
      DateType,
      LongType))
    assert(p.statsColumns === Seq("l", "d", "dt", "i"))
    assert(p.countedColumns === Seq("b"))
    assert(p.describe === "PushedAggregation: [COUNT(*), COUNT(b), SUM(l), MIN(d), MAX(dt), " +
      "SUM(i)], PushedGroupBy: [p, s, i, b, dt]")
  }

  test("tinyint and smallint are pushed as int is: SUM is a bigint, MIN and MAX keep the type") {
    // Whatever the statistics say: their values cannot make a double sum inexact.
    val p = plan(
      Seq(
        new Sum(ref("t"), false),
        new Min(ref("t")),
        new Max(ref("h")),
        new Count(ref("h"), false)),
      Seq("t", "h"),
      exact = _ => false).get
    assert(p.metrics === Seq(
      SumOf("t", ByteType),
      MinOf("t", ByteType),
      MaxOf("h", ShortType),
      CountOf("h")))
    assert(p.schema.map(_.dataType) ===
      Seq(ByteType, ShortType, LongType, ByteType, ShortType, LongType))
  }

  test("what tantivy cannot answer exactly is left to Spark") {
    assert(plan(Seq(new Sum(ref("dec"), false))).isEmpty) // decimals are held as doubles
    assert(plan(Seq(new Min(ref("ts")))).isEmpty) // timestamps are fast to the second
    assert(plan(Seq(new Max(ref("s")))).isEmpty) // no string min/max in tantivy4java 0.31.0
    assert(plan(Seq(new Sum(ref("slow"), false))).isEmpty) // not fast
    assert(plan(Seq(new Sum(ref("l"), true))).isEmpty) // DISTINCT
    assert(plan(Seq(new CountStar()), Seq("msg")).isEmpty) // text: terms are tokens
    assert(plan(Seq(new CountStar()), Seq("d")).isEmpty) // NaN and -0.0 group apart
    assert(plan(Seq(new CountStar()), Seq("ts")).isEmpty)
    // A long whose double sums may not be exact, summed, compared or grouped.
    val notExact = (c: String) => c != "l"
    assert(plan(Seq(new Sum(ref("l"), false)), exact = notExact).isEmpty)
    assert(plan(Seq(new Max(ref("l"))), exact = notExact).isEmpty)
    assert(plan(Seq(new CountStar()), Seq("l"), exact = notExact).isEmpty)
    assert(plan(Seq(new Count(ref("l"), false)), exact = notExact).isDefined)
    assert(plan(Seq(new CountStar()), Seq("s", "i", "b", "dt", "l")).isEmpty) // 5 data groups
  }

  test("partials folded from rows follow Spark: NULLs skipped, empty is NULL, NaN is largest") {
    val metrics = Seq(
      CountAll,
      CountOf("d"),
      SumOf("i", IntegerType),
      SumOf("d", DoubleType),
      MinOf("d", DoubleType),
      MaxOf("d", DoubleType),
      MaxOf("l", LongType))
    val acc = new PartialAggregator(metrics)
    val a = Seq(UTF8String.fromString("a"))
    def add(key: Seq[Any], i: Any, d: Any, l: Any): Unit =
      acc.add(key, Array[Any](null, d, i, d, d, d, l))
    add(a, 1, 2.5, 7L)
    add(a, null, null, null)
    add(a, 3, Double.NaN, -1L)
    add(Seq(null), null, null, null)
    val out = acc.result.map { case (k, v) => k -> v.toSeq }.toMap
    val (countA, nonNull, sumI, sumD, minD, maxD, maxL) = out(a) match {
      case Seq(c, n, si, sd, mn, mx, ml) => (c, n, si, sd, mn, mx, ml)
    }
    assert((countA, nonNull, sumI, minD, maxL) === ((3L, 2L, 4L, 2.5, 7L)))
    assert(sumD.asInstanceOf[Double].isNaN && maxD.asInstanceOf[Double].isNaN)
    assert(out(Seq(null)) === Seq(1L, 0L, null, null, null, null, null))
    assert(PartialAggregator.empty(metrics).toSeq === Seq(0L, 0L, null, null, null, null, null))
  }

  test("partials of tinyint and smallint fold in their own order; sums are longs") {
    val metrics = Seq(MinOf("t", ByteType), MaxOf("h", ShortType), SumOf("t", ByteType))
    val acc = new PartialAggregator(metrics)
    Seq[(Any, Any)]((-1.toByte, 5.toShort), (-128.toByte, -32768.toShort), (127.toByte, null))
      .foreach { case (t, h) => acc.add(Nil, Array[Any](t, h, t)) }
    assert(acc.result.map(_._2.toSeq) === Seq(Seq(-128.toByte, 5.toShort, -2L)))
  }

  test("terms keys convert to Spark's values only when exact") {
    import IndexTables4SparkAggregateReader.keyOf
    assert(keyOf(StringType, "x") === Some(UTF8String.fromString("x")))
    assert(keyOf(IntegerType, "-42") === Some(-42))
    assert(keyOf(LongType, "11000033") === Some(11000033L))
    assert(keyOf(IntegerType, "1.5") === None)
    assert(keyOf(ByteType, "-128") === Some(-128.toByte))
    assert(keyOf(ShortType, "32767") === Some(32767.toShort))
    assert(keyOf(ByteType, "128") === None) // never wrapped to -128
    assert(keyOf(ShortType, "-32769") === None)
    assert(keyOf(BooleanType, "1") === Some(true))
    assert(keyOf(BooleanType, "0") === Some(false))
    assert(keyOf(DateType, "2024-01-02T00:00:00Z") === Some(19724))
    assert(keyOf(DateType, "2024-01-02T00:00:01Z") === None)
  }
}
