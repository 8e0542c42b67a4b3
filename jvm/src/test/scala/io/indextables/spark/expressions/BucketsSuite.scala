package io.indextables.spark.expressions

import java.time.Instant

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Literal}
import org.apache.spark.sql.connector.expressions.{Expression => V2Expression, Expressions, UserDefinedScalarFunc}
import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation, AggregateFunc, CountStar, Sum}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.read.aggregate.{AggregatePlan, GroupColumn}
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.schema.{IndexKind, IndexedField, TableIndexSchema}

/** The bucket functions' keys, arguments, and when their GROUP BY is pushed. */
class BucketsSuite extends AnyFunSuite {

  private def micros(s: String): Long = {
    val i = Instant.parse(s)
    i.getEpochSecond * 1000000L + i.getNano / 1000
  }

  test("histogram keys floor towards minus infinity, with an offset, at the boundaries") {
    val h = HistogramBucket(10.0, 0.0)
    assert(h.key(0.0) === 0.0)
    assert(h.key(9.999) === 0.0)
    assert(h.key(10.0) === 10.0)
    assert(h.key(-0.001) === -10.0)
    assert(h.key(-10.0) === -10.0)
    assert(h.key(-10.5) === -20.0)
    val o = HistogramBucket(10.0, 3.0)
    assert(o.key(3.0) === 3.0)
    assert(o.key(2.999) === -7.0)
    assert(o.key(-7.0) === -7.0)
    assert(o.key(12.9) === 3.0)
    assert(o.key(13.0) === 13.0)
    // A negative offset, and keys of integer and float values.
    assert(HistogramBucket(5.0, -1.0).keyOf(-1) === -1.0)
    assert(HistogramBucket(5.0, -1.0).keyOf(-2L) === -6.0)
    assert(HistogramBucket(0.5, 0.0).keyOf(0.75f) === 0.5)
  }

  test("date histogram keys are UTC interval starts, before 1970 too") {
    val hour = DateHistogramBucket(3600000000L, 0L)
    assert(hour.key(micros("2024-03-01T05:30:00.250Z")) === micros("2024-03-01T05:00:00Z"))
    assert(hour.key(micros("2024-03-01T05:00:00Z")) === micros("2024-03-01T05:00:00Z"))
    assert(hour.key(micros("2024-03-01T04:59:59.999999Z")) === micros("2024-03-01T04:00:00Z"))
    assert(hour.key(micros("1969-12-31T23:59:59.500Z")) === micros("1969-12-31T23:00:00Z"))
    assert(hour.key(micros("1969-12-31T23:00:00Z")) === micros("1969-12-31T23:00:00Z"))
    assert(hour.key(micros("1900-06-15T12:34:56Z")) === micros("1900-06-15T12:00:00Z"))
    val day6 = DateHistogramBucket(86400000000L, 6 * 3600000000L)
    assert(day6.key(micros("2024-03-01T05:59:59Z")) === micros("2024-02-29T06:00:00Z"))
    assert(day6.key(micros("2024-03-01T06:00:00Z")) === micros("2024-03-01T06:00:00Z"))
    val halfMinus7 = DateHistogramBucket(1800000000L, -7 * 60000000L)
    assert(halfMinus7.key(micros("2024-03-01T00:22:59Z")) === micros("2024-02-29T23:53:00Z"))
    assert(halfMinus7.key(micros("2024-03-01T00:23:00Z")) === micros("2024-03-01T00:23:00Z"))
  }

  test("durations read and print as Elasticsearch writes them") {
    assert(Bucket.parseDuration("1h", signed = false) === Some(3600000000L))
    assert(Bucket.parseDuration("30m", signed = false) === Some(1800000000L))
    assert(Bucket.parseDuration("250ms", signed = false) === Some(250000L))
    assert(Bucket.parseDuration("2d", signed = false) === Some(172800000000L))
    assert(Bucket.parseDuration("-6h", signed = true) === Some(-21600000000L))
    assert(Bucket.parseDuration("-6h", signed = false) === None)
    assert(Bucket.parseDuration("1w", signed = false) === None)
    assert(Bucket.parseDuration("h", signed = false) === None)
    assert(Bucket.parseDuration("99999999999999999d", signed = false) === None)
    assert(Bucket.formatDuration(3600000000L) === "1h")
    assert(Bucket.formatDuration(-420000000L) === "-7m")
    assert(Bucket.formatDuration(1500000L) === "1500ms")
  }

  test("ranges: from inclusive, to exclusive, unbounded ends, NULL outside every range") {
    val r = RangeBucket(Seq(
      NamedRange("low", None, Some(10.0)),
      NamedRange("mid", Some(10.0), Some(20.0)),
      NamedRange("high", Some(50.0), None)))
    assert(r.keyOf(-1e300) === UTF8String.fromString("low"))
    assert(r.keyOf(9.999) === UTF8String.fromString("low"))
    assert(r.keyOf(10) === UTF8String.fromString("mid"))
    assert(r.keyOf(20L) === null)
    assert(r.keyOf(49.9) === null)
    assert(r.keyOf(50.0f) === UTF8String.fromString("high"))
  }

  test("canonical names carry every argument, and read back") {
    val buckets = Seq(
      HistogramBucket(0.1, -0.05),
      DateHistogramBucket(1800000000L, -420000000L),
      RangeBucket(Seq(
        NamedRange("a:b, 'c'", None, Some(1.5)),
        NamedRange("NULL", Some(1.5), None)))
    )
    buckets.foreach(b => assert(Bucket.fromCanonicalName(b.canonicalName) === Some(b)))
    assert(Bucket.fromCanonicalName("some.other.function") === None)
  }

  private def call(name: String, args: Any*) = {
    val (_, _, build) = BucketFunctions.all.find(_._1.funcName == name).get
    build(AttributeReference("x", DoubleType)() +: args.map(Literal(_)))
  }

  test("Spark evaluates the functions through their expressions, NULL to NULL") {
    val h = call(Bucket.Histogram, 10, 5)
    assert(h.dataType === DoubleType)
    val fn = h.asInstanceOf[org.apache.spark.sql.catalyst.expressions.ApplyFunctionExpression]
      .function.asInstanceOf[BucketFunction]
    val key: AnyRef = fn.produceResult(InternalRow(-0.5, null, null))
    assert(key === Double.box(-5.0))
    assert(fn.produceResult(InternalRow(null, null, null)) == null)
    assert(call(Bucket.Range, "a", null, 1.0).dataType === StringType)
  }

  test("bad arguments fail with the function named") {
    def fails(name: String, args: Any*): String =
      intercept[IndexTablesException](call(name, args: _*)).getMessage
    assert(fails(Bucket.Histogram, 0).contains("interval must be a positive number"))
    assert(fails(Bucket.Histogram, -1.0).contains(Bucket.Histogram))
    assert(fails(Bucket.DateHistogram, "1h").contains("takes a TIMESTAMP column"))
    assert(fails(Bucket.Range, "a", 1.0, 5.0, "b", 2.0, 9.0).contains("overlap"))
    assert(fails(Bucket.Range, "a", 3.0, 1.0).contains("from < to"))
  }

  private val tableSchema = StructType(Seq(
    StructField("i", IntegerType),
    StructField("l", LongType),
    StructField("d", DoubleType),
    StructField("ts", TimestampType),
    StructField("s", StringType)))
  private val schema = TableIndexSchema(
    tableSchema,
    Nil,
    Seq(
      IndexedField("i", IntegerType, IndexKind.I64),
      IndexedField("l", LongType, IndexKind.I64),
      IndexedField("d", DoubleType, IndexKind.F64),
      IndexedField("ts", TimestampType, IndexKind.DateTime),
      IndexedField("s", StringType, IndexKind.RawString)
    )
  )

  private def grouped(
      bucket: Bucket,
      column: String,
      aggs: Seq[AggregateFunc] = Seq(new CountStar()),
      fromEpoch: Boolean = true): Option[AggregatePlan] = {
    val f = new UserDefinedScalarFunc(
      bucket.function,
      bucket.canonicalName,
      Array[V2Expression](Expressions.column(column)))
    AggregatePlan.of(
      new Aggregation(aggs.toArray, Array[V2Expression](f, Expressions.column("s"))),
      schema,
      tableSchema,
      _ => true,
      _ => fromEpoch)
  }

  test("a bucket GROUP BY is pushed where tantivy's keys are Spark's") {
    val hour = DateHistogramBucket(3600000000L, 0L)
    val p = grouped(hour, "ts").get
    assert(p.groupBy.head === GroupColumn("ts", TimestampType, isPartition = false, Some(hour)))
    assert(p.describe.contains("PushedGroupBy: [indextables_date_histogram(ts, '1h', '0d'), s]"))
    assert(grouped(HistogramBucket(2.5, 0), "i").isDefined)
    assert(grouped(HistogramBucket(2.5, 0), "d").isDefined)
    // Not: before 1970, below a second, a string column, a fractional bound on integers.
    assert(grouped(hour, "ts", fromEpoch = false).isEmpty)
    assert(grouped(DateHistogramBucket(500000L, 0L), "ts").isEmpty)
    assert(grouped(HistogramBucket(1, 0), "s").isEmpty)
    val frac = RangeBucket(Seq(NamedRange("a", None, Some(1.5))))
    assert(grouped(frac, "i").isEmpty)
    assert(grouped(frac, "d").isDefined)
    // A range aggregation holds no metric but its doc count (tantivy4java 0.31.0).
    assert(grouped(frac, "d", Seq(new Sum(Expressions.column("l"), false))).isEmpty)
  }
}
