package io.indextables.spark.schema

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException

class TableIndexSchemaSuite extends AnyFunSuite {

  private val everyKind = StructType(Seq(
    StructField("s", StringType),
    StructField("t", StringType),
    StructField("j", StringType),
    StructField("l", LongType),
    StructField("i", IntegerType),
    StructField("sh", ShortType),
    StructField("by", ByteType),
    StructField("d", DoubleType),
    StructField("f", FloatType),
    StructField("dec", DecimalType(10, 2)),
    StructField("b", BooleanType),
    StructField("dt", DateType),
    StructField("ts", TimestampType),
    StructField("bin", BinaryType),
    StructField("st", StructType(Seq(StructField("x", LongType), StructField("y", StringType)))),
    StructField("arr", ArrayType(StringType)),
    StructField("p", StringType)
  ))

  private def resolveError(
      schema: StructType,
      partitions: Seq[String] = Nil,
      typemap: Map[String, String] = Map.empty): String =
    intercept[IndexTablesException] {
      TableIndexSchema.resolve(schema, partitions, typemap)
    }.getMessage

  test("every supported column type gets its index kind") {
    val s = TableIndexSchema.resolve(everyKind, Seq("p"), Map("t" -> "text", "j" -> "json"))
    val kinds = s.fields.map(f => f.name -> f.kind).toMap
    assert(kinds === Map(
      "s" -> IndexKind.RawString,
      "t" -> IndexKind.Text,
      "j" -> IndexKind.Json,
      "l" -> IndexKind.I64,
      "i" -> IndexKind.I64,
      "sh" -> IndexKind.I64,
      "by" -> IndexKind.I64,
      "d" -> IndexKind.F64,
      "f" -> IndexKind.F64,
      "dec" -> IndexKind.F64,
      "b" -> IndexKind.Bool,
      "dt" -> IndexKind.DateTime,
      "ts" -> IndexKind.DateTime,
      "bin" -> IndexKind.Bytes,
      "st" -> IndexKind.Json,
      "arr" -> IndexKind.Json
    ))
  }

  test("partition columns are kept out of the indexed fields and the data schema") {
    val s = TableIndexSchema.resolve(everyKind, Seq("p"), IndexingRequest())
    assert(s.field("p").isEmpty)
    assert(s.isPartitionColumn("p") && !s.isPartitionColumn("s"))
    assert(s.partitionSchema.fieldNames.toSeq === Seq("p"))
    assert(!s.dataSchema.fieldNames.contains("p"))
    assert(s.dataSchema.length === everyKind.length - 1)
  }

  test("the recorded typemap covers every string data column, string by default") {
    val s = TableIndexSchema.resolve(everyKind, Seq("p"), Map("t" -> "text", "j" -> "json"))
    assert(s.typemap === Map("s" -> "string", "t" -> "text", "j" -> "json"))
  }

  test("typemap keys are lower case and match columns case-insensitively") {
    val schema = StructType(Seq(StructField("Body", StringType)))
    val s = TableIndexSchema.resolve(schema, Nil, Map("body" -> "text"))
    assert(s.field("Body").map(_.kind) === Some(IndexKind.Text))
  }

  test("unsupported top-level types are refused with the column and type named") {
    Seq[(DataType, String)](
      MapType(IntegerType, StringType) -> "map<int,string>",
      DecimalType(16, 2) -> "decimal(16,2)",
      TimestampNTZType -> "timestamp_ntz",
      NullType -> "void"
    ).foreach { case (dt, name) =>
      val msg = resolveError(StructType(Seq(StructField("ok", LongType), StructField("bad", dt))))
      assert(msg.contains("Column 'bad'") && msg.contains(s"type $name"), msg)
    }
  }

  test("an unsupported type nested in a struct is refused with its full path") {
    val nested = StructType(Seq(StructField(
      "inner",
      StructType(Seq(StructField("m", MapType(LongType, LongType)))))))
    val msg = resolveError(StructType(Seq(StructField("outer", nested))))
    assert(msg.contains("'outer.inner.m'") && msg.contains("map<bigint,bigint>"), msg)
  }

  test("an unsupported array element type is refused with the element path") {
    val msg = resolveError(StructType(Seq(StructField("a", ArrayType(ShortType)))))
    assert(msg.contains("'a.element'") && msg.contains("smallint"), msg)
    val deep = resolveError(StructType(Seq(StructField(
      "s",
      StructType(Seq(StructField("xs", ArrayType(BinaryType))))))))
    assert(deep.contains("'s.xs.element'") && deep.contains("binary"), deep)
  }

  test("nested structs and arrays of supported types are accepted as json") {
    val schema = StructType(Seq(StructField(
      "s",
      StructType(Seq(
        StructField("xs", ArrayType(StructType(Seq(StructField("d", DateType))))),
        StructField("dec", DecimalType(5, 1)))))))
    assert(TableIndexSchema.resolve(schema, Nil, IndexingRequest()).field("s").map(_.kind) ===
      Some(IndexKind.Json))
  }

  test("an unknown index type in the typemap is refused, naming the column and value") {
    val msg = resolveError(everyKind, typemap = Map("s" -> "fulltext"))
    assert(msg.contains("'fulltext'") && msg.contains("'s'"), msg)
  }

  test("a typemap entry for a column the data lacks is refused, naming the column") {
    val msg = resolveError(everyKind, typemap = Map("nope" -> "text"))
    assert(msg.contains("typemap.nope"), msg)
  }

  test("text or json on a non-string column is refused, naming column, type and index type") {
    val msg = resolveError(everyKind, typemap = Map("l" -> "text"))
    assert(msg.contains("'l'") && msg.contains("bigint") && msg.contains("'text'"), msg)
    val msg2 = resolveError(everyKind, typemap = Map("st" -> "json"))
    assert(msg2.contains("'st'") && msg2.contains("'json'"), msg2)
  }

  test("partition columns may be string, any integer, boolean, double, date or timestamp") {
    val integers = Seq(ByteType, ShortType, IntegerType, LongType)
    (integers ++ Seq(StringType, BooleanType, DoubleType, DateType, TimestampType))
      .foreach { dt =>
        val schema = StructType(Seq(StructField("v", LongType), StructField("p", dt)))
        val s = TableIndexSchema.resolve(schema, Seq("p"), IndexingRequest())
        assert(s.partitionSchema === StructType(Seq(StructField("p", dt))))
      }
  }

  test("other partition column types are refused, naming the column and type") {
    Seq[(DataType, String)](
      FloatType -> "float",
      DecimalType(10, 2) -> "decimal(10,2)",
      BinaryType -> "binary",
      StructType(Seq(StructField("x", LongType))) -> "struct<x:bigint>"
    ).foreach { case (dt, n) =>
      val schema = StructType(Seq(StructField("v", LongType), StructField("p", dt)))
      val msg = resolveError(schema, Seq("p"))
      assert(msg.contains("Partition column 'p'") && msg.contains(n), msg)
    }
  }

  test("a partition column the data lacks is refused, naming the column") {
    val msg = resolveError(StructType(Seq(StructField("v", LongType))), Seq("missing"))
    assert(msg.contains("missing"), msg)
  }

  test("a partition column the data lacks is named as a partition column") {
    val msg = resolveError(StructType(Seq(StructField("v", LongType))), Seq("missing"))
    assert(msg.contains("Partition column 'missing'"), msg)
  }

  test("a typemap entry on a partition column is refused: partition values are not indexed") {
    val msg = resolveError(
      StructType(Seq(StructField("v", LongType), StructField("p", StringType))),
      Seq("p"),
      Map("p" -> "text"))
    assert(msg.contains("typemap.p") && msg.contains("partition column"), msg)
  }
}
