package io.indextables.spark.write

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.schema.TableIndexSchema
import io.indextables.tantivy4java.batch.{BatchDocument, BatchDocumentBuilder, BatchDocumentReader}

class DocumentBatchEncoderSuite extends AnyFunSuite {

  private val schema = StructType(Seq(
    StructField("s", StringType),
    StructField("t", StringType),
    StructField("js", StringType),
    StructField("l", LongType),
    StructField("i", IntegerType),
    StructField("d", DoubleType),
    StructField("f", FloatType),
    StructField("dec", DecimalType(10, 2)),
    StructField("b", BooleanType),
    StructField("dt", DateType),
    StructField("ts", TimestampType),
    StructField("bin", BinaryType),
    StructField("st", StructType(Seq(StructField("a", LongType), StructField("n", StringType)))),
    StructField("arr", ArrayType(StringType))
  ))
  private val index = TableIndexSchema.resolve(schema, Nil, Map("t" -> "text", "js" -> "json"))
  private val fields = index.fields.map(f => (schema.fieldIndex(f.name), f))

  private def row(k: Int): InternalRow = {
    if (k % 6 == 5) return new GenericInternalRow(schema.length)
    val long = if (k == 3) "x" * 70000 else s"wörd $k"
    new GenericInternalRow(Array[Any](
      UTF8String.fromString(s"value-$k"),
      UTF8String.fromString(long),
      UTF8String.fromString(s"""{"k": $k, "nested": {"z": [1, "two"]}}"""),
      -k * 1000000007L,
      k,
      k * 1.5,
      k * 0.25f,
      Decimal(BigDecimal(k) + BigDecimal("0.25"), 10, 2),
      k % 2 == 0,
      19000 + k,
      -1000001L + k * 1234567L,
      Array[Byte](k.toByte, 0),
      new GenericInternalRow(Array[Any](
        k.toLong,
        if (k % 2 == 0) null else UTF8String.fromString("n"))),
      new GenericArrayData(Array[Any](UTF8String.fromString("a"), null))
    ))
  }

  private def parse(buf: java.nio.ByteBuffer): Seq[Map[String, Any]] =
    new BatchDocumentReader().parseToMaps(buf).asScala.map(_.asScala.toMap.map {
      case (k, v: Array[Byte]) => k -> v.toSeq
      case (k, v) => k -> v
    }).toSeq

  test("rows encode to the documents RowToDocument and BatchDocumentBuilder make, in one pass") {
    val rows = (0 until 40).map(row)
    val builder = new BatchDocumentBuilder()
    rows.foreach { r =>
      val d = new BatchDocument(); RowToDocument.fill(d, r, fields); builder.addDocument(d)
    }
    val expected = parse(builder.build())
    val encoder = new DocumentBatchEncoder(fields)
    rows.foreach(encoder.add)
    assert(encoder.documentCount === 40)
    val actual = encoder.finish()
    assert(actual.isDirect && actual.remaining() === actual.capacity())
    assert(parse(actual) === expected)
    assert(expected(5).isEmpty && expected(3)("t") === "x" * 70000)
    // The encoder starts over after finish.
    assert(encoder.documentCount === 0)
    encoder.add(rows(1))
    assert(parse(encoder.finish()) === Seq(expected(1)))
  }

  test("a timestamp outside tantivy's date range is refused with the column named") {
    val encoder = new DocumentBatchEncoder(fields)
    val r = row(1).asInstanceOf[GenericInternalRow]
    r.update(schema.fieldIndex("ts"), Long.MaxValue / 2)
    val e = intercept[IndexTablesException](encoder.add(r))
    assert(e.getMessage.contains("'ts'") && e.getMessage.contains("1677-2262"), e.getMessage)
  }

  test("a column name longer than a batch can carry fails naming the column, before any row") {
    val long = "c" + "é" * 40000 // 80,001 bytes in UTF-8, 40,001 characters
    val wide = StructType(Seq(StructField(long, LongType)))
    val f = TableIndexSchema.resolve(wide, Nil, Map.empty[String, String]).fields
    val e = intercept[IndexTablesException](new DocumentBatchEncoder(f.map(x => (0, x))))
    assert(e.getErrorClass === "INDEXTABLES_COLUMN_NAME_TOO_LONG", e.getMessage)
    assert(e.getSqlState === "42622")
    assert(e.getMessage.contains("80001 bytes") && e.getMessage.contains(long.take(64)))
    // At the limit, the name is carried.
    val edge = StructType(Seq(StructField("x" * 65535, LongType)))
    new DocumentBatchEncoder(
      TableIndexSchema.resolve(edge, Nil, Map.empty[String, String]).fields.map(x => (0, x)))
  }
}
