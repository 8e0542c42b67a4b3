package io.indextables.spark.write

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.schema.TableIndexSchema

class WritePathSelectorSuite extends AnyFunSuite {

  private def select(
      fields: Seq[StructField],
      typemap: Map[String, String] = Map.empty,
      partitions: Seq[String] = Nil) =
    WritePathSelector.select(TableIndexSchema.resolve(StructType(fields), partitions, typemap))

  private val flat = Seq(
    StructField("s", StringType),
    StructField("l", LongType),
    StructField("i", IntegerType),
    StructField("d", DoubleType),
    StructField("f", FloatType),
    StructField("dec", DecimalType(10, 2)),
    StructField("b", BooleanType),
    StructField("dt", DateType),
    StructField("ts", TimestampType),
    StructField("bin", BinaryType)
  )

  test("flat columns with raw strings take the Arrow FFI path") {
    val d = select(flat)
    assert(d.path === WritePath.ArrowFfi)
    assert(d.reason.contains("Arrow FFI"))
  }

  test("a struct without arrays and a partition column still take the Arrow FFI path") {
    val st = StructField(
      "st",
      StructType(Seq(StructField("x", LongType), StructField("y", StringType))))
    assert(select(flat :+ st :+ StructField("p", IntegerType), partitions = Seq("p")).path ===
      WritePath.ArrowFfi)
  }

  test("a text column takes the batch-document path, and the reason names it") {
    val d = select(flat :+ StructField("body", StringType), Map("body" -> "text"))
    assert(d.path === WritePath.BatchDocuments)
    assert(d.reason.contains("'body'") && d.reason.contains("text"), d.reason)
  }

  test("a json string column takes the batch-document path, and the reason names it") {
    val d = select(flat :+ StructField("doc", StringType), Map("doc" -> "json"))
    assert(d.path === WritePath.BatchDocuments)
    assert(d.reason.contains("'doc'") && d.reason.contains("JSON"), d.reason)
  }

  test("an array column, top-level or inside a struct, takes the batch-document path") {
    val top = select(flat :+ StructField("tags", ArrayType(StringType)))
    assert(top.path === WritePath.BatchDocuments)
    assert(top.reason.contains("'tags'") && top.reason.contains("array"), top.reason)
    val nested = select(flat :+ StructField(
      "st",
      StructType(Seq(StructField("xs", ArrayType(LongType))))))
    assert(nested.path === WritePath.BatchDocuments)
    assert(nested.reason.contains("'st'"), nested.reason)
  }

  test("an explicit string typemap keeps the Arrow FFI path") {
    assert(select(flat, Map("s" -> "string")).path === WritePath.ArrowFfi)
  }
}
