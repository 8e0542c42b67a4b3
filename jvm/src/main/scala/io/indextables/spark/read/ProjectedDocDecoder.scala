package io.indextables.spark.read

import java.nio.charset.StandardCharsets
import java.nio.{ByteBuffer, ByteOrder}
import java.time.{LocalDateTime, ZoneOffset}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.IndexedField

/**
 * Decodes tantivy4java's document batch format ("TANT": what `docBatchProjected` parses into a
 * map per document) straight into rows: strings become UTF8String from their bytes, numbers go
 * into the row unboxed, anything else takes the same boxed value tantivy4java would have made
 * and [[DocumentValues.toCatalyst]]. As with the map form, a field's first value counts.
 * Format: magic, documents (field count; per field: name, type code, value count, values), the
 * offset table, then offset-table position, document count and magic. Stateless apart from its
 * field table; one per reader, on one thread.
 *
 * @param fields   the stored fields wanted, each with the row ordinal it fills
 */
final class ProjectedDocDecoder(fields: Seq[(IndexedField, Int)]) {
  private val names: Array[Array[Byte]] =
    fields.map(_._1.name.getBytes(StandardCharsets.UTF_8)).toArray
  private val types: Array[DataType] = fields.map(_._1.dataType).toArray
  private val ordinals: Array[Int] = fields.map(_._2).toArray

  /** One row per document of `bytes`, in order, each from `newRow` and filled in place. */
  def decode(bytes: Array[Byte], newRow: () => GenericInternalRow): Array[InternalRow] = {
    val buf = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder())
    if (bytes.length < 16 || buf.getInt(0) != Magic || buf.getInt(bytes.length - 4) != Magic)
      throw IndexTablesErrors.nativeDataUnexpected(
        s"document batch of ${bytes.length} bytes has no TANT header/footer")
    val tablePos = buf.getInt(bytes.length - 12)
    val count = buf.getInt(bytes.length - 8)
    val out = new Array[InternalRow](count)
    var d = 0
    while (d < count) {
      val row = newRow()
      readDocument(buf, bytes, buf.getInt(tablePos + 4 * d), row)
      out(d) = row
      d += 1
    }
    out
  }

  private def readDocument(
      buf: ByteBuffer,
      bytes: Array[Byte],
      start: Int,
      row: GenericInternalRow): Unit = {
    val fieldCount = buf.getShort(start) & 0xffff
    var pos = start + 2
    var f = 0
    while (f < fieldCount) {
      val nameLen = buf.getShort(pos) & 0xffff
      val slot = slotOf(bytes, pos + 2, nameLen)
      pos += 2 + nameLen
      val code = buf.get(pos)
      val values = buf.getShort(pos + 1) & 0xffff
      pos += 3
      var v = 0
      while (v < values) {
        if (v == 0 && slot >= 0)
          row.update(ordinals(slot), value(buf, bytes, pos, code, types(slot)))
        pos = skip(buf, pos, code)
        v += 1
      }
      f += 1
    }
  }

  /** The index of the wanted field named by bytes(at until at+len), or -1. */
  private def slotOf(bytes: Array[Byte], at: Int, len: Int): Int = {
    var i = 0
    while (i < names.length) {
      val n = names(i)
      if (n.length == len && java.util.Arrays.equals(n, 0, len, bytes, at, at + len)) return i
      i += 1
    }
    -1
  }

  private def value(buf: ByteBuffer, bytes: Array[Byte], pos: Int, code: Byte, dt: DataType): Any =
    code match {
      case Text | Json | IpAddr | Facet =>
        val len = buf.getInt(pos)
        if (dt == StringType && code != Json) UTF8String.fromBytes(bytes, pos + 4, len)
        else DocumentValues.toCatalyst(new String(bytes, pos + 4, len, StandardCharsets.UTF_8), dt)
      case Integer | Unsigned =>
        val n = buf.getLong(pos)
        dt match {
          case LongType => n
          case IntegerType => n.toInt
          case ShortType => n.toShort
          case ByteType => n.toByte
          case _ => DocumentValues.toCatalyst(java.lang.Long.valueOf(n), dt)
        }
      case Float =>
        val x = buf.getDouble(pos)
        if (dt == DoubleType) x else DocumentValues.toCatalyst(java.lang.Double.valueOf(x), dt)
      case Bool => DocumentValues.toCatalyst(java.lang.Boolean.valueOf(buf.get(pos) != 0), dt)
      case Date =>
        val nanos = buf.getLong(pos)
        if (dt == TimestampType) Math.floorDiv(nanos, 1000L)
        else DocumentValues.toCatalyst(
          LocalDateTime.ofEpochSecond(
            Math.floorDiv(nanos, 1000000000L),
            Math.floorMod(nanos, 1000000000L).toInt,
            ZoneOffset.UTC),
          dt)
      case Bytes =>
        val len = buf.getInt(pos)
        DocumentValues.toCatalyst(java.util.Arrays.copyOfRange(bytes, pos + 4, pos + 4 + len), dt)
      case other =>
        throw IndexTablesErrors.nativeDataUnexpected(s"unknown stored value type code $other")
    }

  private def skip(buf: ByteBuffer, pos: Int, code: Byte): Int = code match {
    case Text | Json | IpAddr | Facet | Bytes => pos + 4 + buf.getInt(pos)
    case Integer | Unsigned | Float | Date => pos + 8
    case Bool => pos + 1
    case other =>
      throw IndexTablesErrors.nativeDataUnexpected(s"unknown stored value type code $other")
  }

  private final val Magic = 0x54414e54
  private final val Text: Byte = 0
  private final val Integer: Byte = 1
  private final val Float: Byte = 2
  private final val Bool: Byte = 3
  private final val Date: Byte = 4
  private final val Bytes: Byte = 5
  private final val Json: Byte = 6
  private final val IpAddr: Byte = 7
  private final val Unsigned: Byte = 8
  private final val Facet: Byte = 9
}
