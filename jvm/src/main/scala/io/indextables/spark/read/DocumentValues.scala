package io.indextables.spark.read

import java.time.{Instant, LocalDate, LocalDateTime, ZoneOffset}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.StoredJson
import io.indextables.spark.stats.StatsValues

/**
 * Converts stored field values, as tantivy4java returns them, back to Spark's internal values:
 * the inverse of the write paths' mapping. Thread-safe.
 */
object DocumentValues {
  private val mapper = new ObjectMapper()

  def toCatalyst(value: Any, dt: DataType): Any = if (value == null) null
  else (dt, value) match {
    case (StringType, s: String) => UTF8String.fromString(s)
    case (StringType, other) => UTF8String.fromString(jsonText(other))
    case (IntegerType, n: Number) => n.intValue()
    case (ShortType, n: Number) => n.shortValue()
    case (ByteType, n: Number) => n.byteValue()
    case (LongType, n: Number) => n.longValue()
    case (DoubleType, n: Number) => n.doubleValue()
    case (FloatType, n: Number) => n.floatValue()
    case (BooleanType, b: java.lang.Boolean) => b.booleanValue()
    case (d: DecimalType, n: Number) =>
      Decimal(
        new java.math.BigDecimal(n.toString).setScale(d.scale, java.math.RoundingMode.HALF_UP),
        d.precision,
        d.scale)
    case (DateType, v) => epochDay(v)
    case (TimestampType, v) => micros(v)
    case (BinaryType, b: Array[Byte]) => b
    case (s: StructType, v) => fromJson(node(v), s)
    case (a: ArrayType, v) =>
      // A split's own store wraps an array in an object; a companion's Parquet gives it bare.
      val n = node(v)
      fromJson(if (n.isArray) n else n.get(StoredJson.ArrayKey), a)
    case (m: MapType, v) => fromJson(node(v), m)
    case (t, v) => throw IndexTablesErrors.nativeDataUnexpected(
        s"Stored value ${v.getClass.getSimpleName} cannot be read as ${t.simpleString}")
  }

  private def jsonText(v: Any): String = v match {
    case m: java.util.Map[_, _] => mapper.writeValueAsString(m)
    case other => other.toString
  }

  private def node(v: Any): JsonNode = v match {
    case s: String => mapper.readTree(s)
    case other => mapper.valueToTree[JsonNode](other)
  }

  private def epochDay(v: Any): Int = v match {
    case d: LocalDateTime => d.toLocalDate.toEpochDay.toInt
    case d: LocalDate => d.toEpochDay.toInt
    case i: Instant => LocalDateTime.ofInstant(i, ZoneOffset.UTC).toLocalDate.toEpochDay.toInt
    case s: String => LocalDate.parse(s.take(10)).toEpochDay.toInt
  }

  private def micros(v: Any): Long = v match {
    case d: LocalDateTime =>
      Math.addExact(
        Math.multiplyExact(d.toEpochSecond(ZoneOffset.UTC), 1000000L),
        (d.getNano / 1000).toLong)
    case i: Instant =>
      Math.addExact(Math.multiplyExact(i.getEpochSecond, 1000000L), (i.getNano / 1000).toLong)
    case s: String => StatsValues.parseTimestamp(s)
  }

  /** A JSON value (as written by the batch-document path or the Arrow FFI path) as `dt`. */
  def fromJson(n: JsonNode, dt: DataType): Any = if (n == null || n.isNull) null
  else dt match {
    case StringType => UTF8String.fromString(if (n.isTextual) n.asText() else n.toString)
    case IntegerType => n.asInt()
    case LongType => n.asLong()
    case DoubleType => n.asDouble()
    case FloatType => n.asDouble().toFloat
    case BooleanType => n.asBoolean()
    case d: DecimalType =>
      Decimal(
        new java.math.BigDecimal(n.asText()).setScale(d.scale, java.math.RoundingMode.HALF_UP),
        d.precision,
        d.scale)
    case DateType =>
      if (n.isNumber) n.asInt() else LocalDate.parse(n.asText().take(10)).toEpochDay.toInt
    case TimestampType => if (n.isNumber) n.asLong() else StatsValues.parseTimestamp(n.asText())
    case s: StructType =>
      new GenericInternalRow(
        s.fields.map(f => fromJson(n.get(f.name), f.dataType)).toArray[Any]): InternalRow
    case a: ArrayType =>
      new GenericArrayData(n.elements().asScala.map(e => fromJson(e, a.elementType)).toArray[Any])
    case m: MapType =>
      val entries = n.fields().asScala.toArray
      new ArrayBasedMapData(
        new GenericArrayData(entries.map(e => UTF8String.fromString(e.getKey): Any)),
        new GenericArrayData(entries.map(e => fromJson(e.getValue, m.valueType))))
    case other =>
      throw IndexTablesErrors.nativeDataUnexpected(s"JSON cannot be read as ${other.simpleString}")
  }
}
