package io.indextables.spark.write

import java.time.{LocalDate, LocalDateTime, ZoneOffset}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.StoredJson
import io.indextables.spark.schema.{IndexKind, IndexedField, IntegerTypes}
import io.indextables.spark.stats.StatsValues
import io.indextables.tantivy4java.batch.BatchDocument

/**
 * Converts rows to tantivy4java batch documents for the batch-document write path, and holds
 * the mapping of nested values to JSON shared with the reader. Stateless apart from a Jackson
 * mapper (thread-safe).
 */
object RowToDocument {
  private val mapper = new ObjectMapper()

  /** Adds the row's data columns to `doc`. `fields` pairs each field with its row ordinal. */
  def fill(doc: BatchDocument, row: InternalRow, fields: Seq[(Int, IndexedField)]): Unit =
    fields.foreach { case (ord, f) =>
      if (!row.isNullAt(ord)) f.kind match {
        case IndexKind.RawString | IndexKind.Text =>
          doc.addText(f.name, row.getUTF8String(ord).toString)
        case IndexKind.Ip => doc.addIpAddr(f.name, row.getUTF8String(ord).toString)
        case IndexKind.I64 => doc.addInteger(f.name, IntegerTypes.getLong(row, ord, f.dataType))
        case IndexKind.F64 => f.dataType match {
            case FloatType => doc.addFloat(f.name, row.getFloat(ord).toDouble)
            case d: DecimalType =>
              doc.addFloat(f.name, row.getDecimal(ord, d.precision, d.scale).toDouble)
            case _ => doc.addFloat(f.name, row.getDouble(ord))
          }
        case IndexKind.Bool => doc.addBoolean(f.name, row.getBoolean(ord))
        case IndexKind.DateTime => f.dataType match {
            case DateType =>
              doc.addDate(f.name, LocalDate.ofEpochDay(row.getInt(ord).toLong).atStartOfDay())
            case _ => doc.addDate(f.name, toLocalDateTime(row.getLong(ord)))
          }
        case IndexKind.Bytes => doc.addBytes(f.name, row.getBinary(ord))
        case IndexKind.Json => doc.addJson(f.name, jsonValue(row, ord, f))
      }
    }

  /** A json column's value as the object its JSON text is written from. */
  private def jsonValue(row: InternalRow, ord: Int, f: IndexedField): Object = f.dataType match {
    case StringType => mapper.readValue(row.getUTF8String(ord).toString, classOf[Object])
    case a: ArrayType => Map(StoredJson.ArrayKey -> toJava(row.getArray(ord), a)).asJava
    case s: StructType => toJava(row.getStruct(ord, s.length), s)
    case m: MapType => toJava(row.getMap(ord), m)
    case other => throw IndexTablesErrors.internalError(s"json kind on ${other.simpleString}")
  }

  /** A json column's value as JSON text, exactly as `BatchDocument.addJson` writes it. */
  def jsonText(row: InternalRow, ord: Int, f: IndexedField): String =
    mapper.writeValueAsString(jsonValue(row, ord, f))

  def toLocalDateTime(micros: Long): LocalDateTime = {
    val secs = Math.floorDiv(micros, 1000000L)
    val nanos = (Math.floorMod(micros, 1000000L) * 1000L).toInt
    LocalDateTime.ofEpochSecond(secs, nanos, ZoneOffset.UTC)
  }

  private def toJava(row: InternalRow, s: StructType): java.util.Map[String, Object] = {
    val m = new java.util.LinkedHashMap[String, Object]()
    s.fields.zipWithIndex.foreach { case (f, i) =>
      if (!row.isNullAt(i)) m.put(f.name, value(row, i, f.dataType))
    }
    m
  }

  /** A map with string keys as a JSON object (keys in the map's order; a null value kept). */
  private def toJava(map: MapData, m: MapType): java.util.Map[String, Object] = {
    val out = new java.util.LinkedHashMap[String, Object]()
    val keys = map.keyArray()
    val values = map.valueArray()
    (0 until map.numElements()).foreach { i =>
      out.put(
        keys.getUTF8String(i).toString,
        if (values.isNullAt(i)) null else value(values, i, m.valueType))
    }
    out
  }

  private def toJava(arr: ArrayData, a: ArrayType): java.util.List[Object] = {
    val l = new java.util.ArrayList[Object](arr.numElements())
    (0 until arr.numElements()).foreach { i =>
      l.add(if (arr.isNullAt(i)) null else value(arr, i, a.elementType))
    }
    l
  }

  private def value(
      src: org.apache.spark.sql.catalyst.expressions.SpecializedGetters,
      i: Int,
      dt: DataType): Object = dt match {
    case StringType => src.getUTF8String(i).toString
    case IntegerType => Long.box(src.getInt(i).toLong)
    case LongType => Long.box(src.getLong(i))
    case DoubleType => Double.box(src.getDouble(i))
    case FloatType => Double.box(src.getFloat(i).toDouble)
    case BooleanType => Boolean.box(src.getBoolean(i))
    case d: DecimalType => src.getDecimal(i, d.precision, d.scale).toJavaBigDecimal
    case DateType => LocalDate.ofEpochDay(src.getInt(i).toLong).toString
    case TimestampType => StatsValues.formatTimestamp(src.getLong(i))
    case s: StructType => toJava(src.getStruct(i, s.length), s)
    case a: ArrayType => toJava(src.getArray(i), a)
    case m: MapType => toJava(src.getMap(i), m)
    case other => throw IndexTablesErrors.internalError(s"unsupported nested ${other.simpleString}")
  }
}
