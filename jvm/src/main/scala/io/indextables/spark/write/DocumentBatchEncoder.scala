package io.indextables.spark.write

import java.nio.charset.StandardCharsets
import java.nio.{ByteBuffer, ByteOrder}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.{IndexKind, IndexedField, IntegerTypes, IpAddresses}

/**
 * Encodes rows straight into tantivy4java's document batch format ("TANT"), the buffer
 * `IndexWriter.addDocumentsByBuffer` indexes: the same bytes `RowToDocument.fill` plus
 * `BatchDocumentBuilder.build` produce, without a `BatchDocument` (a map of lists) per row and
 * without the builder's second serialisation pass (it serialises once to measure, once to
 * fill). Strings are copied from their UTF-8 bytes. Format: magic; per document the field
 * count, then per field name, type code, value count (always 1) and value; then the offset
 * table, its position, the document count and the magic again. Owned by one writer thread.
 *
 * @param fields each data field with its ordinal in the rows
 */
final class DocumentBatchEncoder(fields: Seq[(Int, IndexedField)]) {
  private val ordinals: Array[Int] = fields.map(_._1).toArray
  private val kinds: Array[IndexedField] = fields.map(_._2).toArray
  private val names: Array[Array[Byte]] = kinds.map(_.name.getBytes(StandardCharsets.UTF_8))
  // The format gives a field name two bytes of length.
  kinds.zip(names).find(_._2.length > 65535).foreach { case (f, n) =>
    throw IndexTablesErrors.columnNameTooLong(f.name, n.length)
  }
  private var buf: ByteBuffer = ByteBuffer.allocate(1 << 16).order(ByteOrder.nativeOrder())
  private var offsets = new Array[Int](1024)
  private var docs = 0
  buf.putInt(DocumentBatchEncoder.Magic)

  def documentCount: Int = docs

  /** Bytes encoded so far. */
  def size: Int = buf.position()

  def add(row: InternalRow): Unit = {
    if (docs == offsets.length) offsets = java.util.Arrays.copyOf(offsets, docs * 2)
    offsets(docs) = buf.position()
    var present = 0
    var i = 0
    while (i < ordinals.length) { if (!row.isNullAt(ordinals(i))) present += 1; i += 1 }
    ensure(2)
    buf.putShort(present.toShort)
    i = 0
    while (i < ordinals.length) {
      if (!row.isNullAt(ordinals(i))) field(row, i)
      i += 1
    }
    docs += 1
  }

  private def field(row: InternalRow, i: Int): Unit = {
    val ord = ordinals(i)
    val f = kinds(i)
    val name = names(i)
    ensure(2 + name.length + 3 + 8)
    buf.putShort(name.length.toShort).put(name)
    f.kind match {
      case IndexKind.RawString | IndexKind.Text =>
        val s = row.getUTF8String(ord)
        header(DocumentBatchEncoder.Text)
        ensure(4 + s.numBytes())
        buf.putInt(s.numBytes())
        s.writeTo(buf)
      case IndexKind.Ip =>
        val s = row.getUTF8String(ord).toString
        if (!IpAddresses.canonical(s).contains(s))
          throw IndexTablesErrors.invalidIpAddress(f.name, s, IpAddresses.canonical(s))
        val b = s.getBytes(StandardCharsets.UTF_8)
        header(DocumentBatchEncoder.IpAddr)
        ensure(4 + b.length)
        buf.putInt(b.length).put(b)
      case IndexKind.I64 =>
        header(DocumentBatchEncoder.Integer)
        buf.putLong(IntegerTypes.getLong(row, ord, f.dataType))
      case IndexKind.F64 =>
        header(DocumentBatchEncoder.Float)
        buf.putDouble(f.dataType match {
          case FloatType => row.getFloat(ord).toDouble
          case d: DecimalType => row.getDecimal(ord, d.precision, d.scale).toDouble
          case _ => row.getDouble(ord)
        })
      case IndexKind.Bool =>
        header(DocumentBatchEncoder.Bool)
        buf.put(if (row.getBoolean(ord)) 1.toByte else 0.toByte)
      case IndexKind.DateTime =>
        val micros = if (f.dataType == DateType) row.getInt(ord).toLong * 86400L * 1000000L
        else row.getLong(ord)
        val seconds = Math.floorDiv(micros, 1000000L)
        if (seconds < -DocumentBatchEncoder.MaxSeconds || seconds > DocumentBatchEncoder.MaxSeconds)
          throw IndexTablesErrors.writeFailed(
            s"column '${f.name}'",
            new IllegalArgumentException(
              s"${RowToDocument.toLocalDateTime(micros)} is outside the dates tantivy holds (years 1677-2262)"))
        header(DocumentBatchEncoder.Date)
        buf.putLong(micros * 1000L)
      case IndexKind.Bytes =>
        val b = row.getBinary(ord)
        header(DocumentBatchEncoder.Bytes)
        ensure(4 + b.length)
        buf.putInt(b.length).put(b)
      case IndexKind.Json =>
        val b = RowToDocument.jsonText(row, ord, f).getBytes(StandardCharsets.UTF_8)
        header(DocumentBatchEncoder.Json)
        ensure(4 + b.length)
        buf.putInt(b.length).put(b)
    }
  }

  /** Type code and a value count of one. */
  private def header(code: Byte): Unit = buf.put(code).putShort(1.toShort)

  private def ensure(n: Int): Unit = if (buf.remaining() < n) {
    val grown = ByteBuffer.allocate(math.max(buf.capacity() * 2L, buf.position() + n.toLong + 1024)
      .min(Int.MaxValue - 16).toInt).order(ByteOrder.nativeOrder())
    buf.flip()
    grown.put(buf)
    buf = grown
  }

  /**
   * The finished batch in a direct buffer of exactly its size (tantivy4java's native side
   * finds the footer at the buffer's end), then starts a new empty batch.
   */
  def finish(): ByteBuffer = {
    ensure(4 * docs + 12)
    val table = buf.position()
    var i = 0
    while (i < docs) { buf.putInt(offsets(i)); i += 1 }
    buf.putInt(table).putInt(docs).putInt(DocumentBatchEncoder.Magic)
    buf.flip()
    val out = ByteBuffer.allocateDirect(buf.remaining()).order(ByteOrder.nativeOrder())
    out.put(buf).flip()
    buf.clear()
    buf.putInt(DocumentBatchEncoder.Magic)
    docs = 0
    out
  }
}

object DocumentBatchEncoder {
  private val Magic = 0x54414e54
  private val Text: Byte = 0
  private val Integer: Byte = 1
  private val Float: Byte = 2
  private val Bool: Byte = 3
  private val Date: Byte = 4
  private val Bytes: Byte = 5
  private val Json: Byte = 6
  private val IpAddr: Byte = 7

  /** tantivy4java's bound on a date's epoch seconds (nanoseconds must fit in a long). */
  private val MaxSeconds = 9223000000L
}
