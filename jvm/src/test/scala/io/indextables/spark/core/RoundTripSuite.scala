package io.indextables.spark.core

import java.sql.{Date, Timestamp}

import org.apache.spark.sql.Row
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesTestBase

class RoundTripSuite extends IndexTablesTestBase {
  import scala.jdk.CollectionConverters._

  private val schema = StructType(Seq(
    StructField("id", LongType),
    StructField("i", IntegerType),
    StructField("s", StringType),
    StructField("d", DoubleType),
    StructField("f", FloatType),
    StructField("b", BooleanType),
    StructField("ts", TimestampType),
    StructField("dt", DateType),
    StructField("dec", DecimalType(10, 2)),
    StructField("bin", BinaryType),
    StructField("st", StructType(Seq(StructField("a", IntegerType), StructField("b", StringType))))
  ))

  private def rows(n: Int): Seq[Row] = (0 until n).map { k =>
    if (k % 7 == 3) Row(k.toLong, null, null, null, null, null, null, null, null, null, null)
    else Row(
      k.toLong,
      k,
      s"value $k",
      k * 1.5,
      k * 0.25f,
      k % 2 == 0,
      new Timestamp(1700000000000L + k * 1000L + (k % 5) * 123L),
      Date.valueOf("2024-01-01"),
      new java.math.BigDecimal(s"$k.25"),
      Array[Byte](k.toByte, 1),
      Row(k, s"n$k")
    )
  }

  test("every Arrow FFI type round-trips with the same values") {
    val path = tablePath("ffi-types")
    val df = spark.createDataFrame(rows(50).asJava, schema)
    df.write.format("indextables").save(path)
    val back = spark.read.format("indextables").load(path)
    assert(back.schema.map(_.dataType) == schema.map(_.dataType))
    val expected = df.collect().map(normalize).sortBy(_.head.asInstanceOf[Long]).toSeq
    val actual = back.collect().map(normalize).sortBy(_.head.asInstanceOf[Long]).toSeq
    assert(actual == expected)
  }

  test("a text column is searched by a word inside a sentence") {
    val path = tablePath("text")
    val df = spark.createDataFrame(
      Seq(
        (1L, "ERROR", "Connection timeout while contacting host alpha"),
        (2L, "INFO", "Request served in 5 ms"),
        (3L, "WARN", "Retrying after timeout")).map { case (a, b, c) => Row(a, b, c) }.asJava,
      StructType(Seq(
        StructField("id", LongType),
        StructField("level", StringType),
        StructField("message", StringType)))
    )
    df.write.format("indextables").option(
      "spark.indextables.indexing.typemap.message",
      "text").save(path)
    val back = spark.read.format("indextables").load(path)
    val hits = back.filter(col("message").contains("timeout")).select("id").collect().map(_.getLong(
      0)).sorted
    assert(hits.toSeq == Seq(1L, 3L))
    val errors = back.filter(col("level") === "ERROR")
    assert(executedPlan(errors).contains("EqualTo(level,ERROR)"))
    assert(errors.collect().map(_.getLong(0)).toSeq == Seq(1L))
  }

  private def normalize(r: Row): Seq[Any] = r.toSeq.map {
    case b: Array[Byte] => b.toSeq
    case other => other
  }
}
