package io.indextables.spark.transaction.state

import java.io.ByteArrayInputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.util.zip.{CRC32, Inflater}

import scala.collection.mutable

import com.github.luben.zstd.{RecyclingBufferPool, ZstdInputStreamNoFinalizer}
import org.apache.avro.Schema
import org.apache.avro.io.{BinaryDecoder, DecoderFactory}
import org.xerial.snappy.Snappy

import io.indextables.spark.IndexTablesErrors

/**
 * An Avro object container file held in memory, read block by block. Unlike Avro's
 * DataFileStream it decodes each block where it lies, reuses one decompression buffer for the
 * whole file, and can pass over a block without decompressing it; a manifest of 50,000 entries
 * is some 300 blocks.
 *
 * Handles the codecs the state format writes or may meet (null, zstandard, snappy, deflate);
 * [[supported]] is false for others (xz, bzip2), which callers read through DataFileStream.
 * Not thread-safe.
 */
private[state] final class AvroContainer(bytes: Array[Byte]) {
  import AvroContainer._

  private var pos = 0

  if (bytes.length < 4 || bytes(0) != 'O' || bytes(1) != 'b' || bytes(2) != 'j' || bytes(3) != 1) {
    throw IndexTablesErrors.malformedStateFile("not an Avro object container file (bad magic)")
  }
  pos = 4

  /** The file's metadata (`avro.schema`, `avro.codec` and any of the writer's own). */
  val meta: Map[String, Array[Byte]] = {
    val m = mutable.LinkedHashMap.empty[String, Array[Byte]]
    var n = readLong()
    while (n != 0) {
      if (n < 0) { n = -n; readLong() } // a negative count is followed by the block's size
      var i = 0L
      while (i < n) {
        val key = new String(readBytes(), UTF_8)
        m.put(key, readBytes())
        i += 1
      }
      n = readLong()
    }
    m.toMap
  }

  private val sync: Array[Byte] = take(SyncSize)

  def metaString(key: String): Option[String] = meta.get(key).map(new String(_, UTF_8))

  val codec: String = metaString("avro.codec").getOrElse("null")

  val schema: Schema = new Schema.Parser().parse(metaString("avro.schema").getOrElse(
    throw IndexTablesErrors.malformedStateFile("the Avro file has no avro.schema")))

  def supported: Boolean = SupportedCodecs(codec)

  private var out = new Array[Byte](0)
  private var decoder: BinaryDecoder = _

  /**
   * Visits every block in order: `keep(index, records)` decides whether the block is
   * decompressed and handed to `read(records, decoder)`, which must consume exactly its
   * records. A block not kept is passed over unread. Call once.
   */
  def foreachBlock(keep: (Int, Long) => Boolean)(read: (Long, BinaryDecoder) => Unit): Unit = {
    var index = 0
    while (pos < bytes.length) {
      val records = readLong()
      val size = readLong()
      if (records < 0 || size < 0 || size > bytes.length - pos - SyncSize) {
        throw IndexTablesErrors.malformedStateFile(s"block $index is truncated or corrupt")
      }
      val start = pos
      pos += size.toInt
      if (!java.util.Arrays.equals(bytes, pos, pos + SyncSize, sync, 0, SyncSize)) {
        throw IndexTablesErrors.malformedStateFile(
          s"block $index does not end in the file's sync marker")
      }
      pos += SyncSize
      if (keep(index, records)) {
        decoder = decompress(start, size.toInt)
        read(records, decoder)
        if (!decoder.isEnd) {
          throw IndexTablesErrors.malformedStateFile(
            s"block $index holds more than its $records records")
        }
      }
      index += 1
    }
  }

  /** A decoder over the decompressed bytes of the block at `start`. */
  private def decompress(start: Int, size: Int): BinaryDecoder = codec match {
    case "null" => DecoderFactory.get().binaryDecoder(bytes, start, size, decoder)
    case "zstandard" =>
      // Avro's zstd frames do not record their size, so they are streamed, with pooled buffers.
      val in = new ZstdInputStreamNoFinalizer(
        new ByteArrayInputStream(bytes, start, size),
        RecyclingBufferPool.INSTANCE)
      val n =
        try drain((buf, off, len) => in.read(buf, off, len), size)
        finally in.close()
      DecoderFactory.get().binaryDecoder(out, 0, n, decoder)
    case "snappy" =>
      // Snappy blocks end with the big-endian CRC32 of the uncompressed bytes.
      val n = Snappy.uncompressedLength(bytes, start, size - 4)
      ensure(n)
      Snappy.uncompress(bytes, start, size - 4, out, 0)
      val crc = new CRC32()
      crc.update(out, 0, n)
      val at = start + size - 4
      val expected = ((bytes(at) & 0xff) << 24) | ((bytes(at + 1) & 0xff) << 16) |
        ((bytes(at + 2) & 0xff) << 8) | (bytes(at + 3) & 0xff)
      if (crc.getValue.toInt != expected)
        throw IndexTablesErrors.malformedStateFile("snappy block CRC mismatch")
      DecoderFactory.get().binaryDecoder(out, 0, n, decoder)
    case "deflate" =>
      val inflater = new Inflater(true)
      try {
        inflater.setInput(bytes, start, size)
        val n = drain(
          (buf, off, len) => {
            val k = inflater.inflate(buf, off, len)
            if (k == 0 && (inflater.finished() || inflater.needsInput())) -1 else k
          },
          size)
        DecoderFactory.get().binaryDecoder(out, 0, n, decoder)
      } finally inflater.end()
    case other => throw IndexTablesErrors.malformedStateFile(s"unsupported Avro codec $other")
  }

  /** Reads a stream into `out` from its start, growing it as needed; the bytes read. */
  private def drain(read: (Array[Byte], Int, Int) => Int, compressed: Int): Int = {
    ensure(math.max(compressed * 8, 64 * 1024))
    var n = 0
    var k = 0
    while (k >= 0) {
      if (n == out.length) out = java.util.Arrays.copyOf(out, out.length * 2)
      k = read(out, n, out.length - n)
      if (k > 0) n += k
    }
    n
  }

  private def ensure(n: Int): Unit =
    if (out.length < n) out = new Array[Byte](math.max(n, out.length * 2))

  private def readLong(): Long = {
    var value = 0L
    var shift = 0
    var b = 0
    do {
      if (pos >= bytes.length)
        throw IndexTablesErrors.malformedStateFile("the Avro file is truncated")
      b = bytes(pos) & 0xff
      pos += 1
      value |= (b & 0x7fL) << shift
      shift += 7
      if (shift > 63 && (b & 0x80) != 0)
        throw IndexTablesErrors.malformedStateFile("malformed varint")
    } while ((b & 0x80) != 0)
    (value >>> 1) ^ -(value & 1)
  }

  private def readBytes(): Array[Byte] = {
    val n = readLong()
    if (n < 0 || n > bytes.length - pos)
      throw IndexTablesErrors.malformedStateFile("the Avro file is truncated")
    take(n.toInt)
  }

  private def take(n: Int): Array[Byte] = {
    if (n > bytes.length - pos)
      throw IndexTablesErrors.malformedStateFile("the Avro file is truncated")
    val a = java.util.Arrays.copyOfRange(bytes, pos, pos + n)
    pos += n
    a
  }
}

private[state] object AvroContainer {
  private val SyncSize = 16
  private val SupportedCodecs = Set("null", "zstandard", "snappy", "deflate")
}
