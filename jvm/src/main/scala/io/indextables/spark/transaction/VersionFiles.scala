package io.indextables.spark.transaction

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, IOException}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.zip.{GZIPInputStream, GZIPOutputStream}

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors

/**
 * Names and byte encoding of the version files `_transaction_log/<20-digit version>.json`.
 *
 * A version file holds newline-delimited JSON actions, one per line, each line ending in `\n`.
 * It is stored in one of three forms, which [[decode]] tells apart by the header:
 *  - `01 01` followed by a gzip stream (what the reference writes, and our default);
 *  - a bare gzip stream (`1f 8b`);
 *  - plain UTF-8 JSON.
 * Stateless and thread-safe; errors name the file.
 */
object VersionFiles {

  /** The two-byte prefix that the reference writes before the gzip stream. */
  val CompressedHeader: Array[Byte] = Array[Byte](0x01, 0x01)

  private val GzipMagic0: Byte = 0x1f.toByte
  private val GzipMagic1: Byte = 0x8b.toByte
  private val NamePattern = """^(\d{20})\.json$""".r

  def fileName(version: Long): String = {
    // Versions come from the log or from checked options (versionAsOf: TableLogResolver).
    if (version < 0) throw IndexTablesErrors.internalError(s"the file name of version $version")
    f"$version%020d.json"
  }

  def path(logPath: Path, version: Long): Path = new Path(logPath, fileName(version))

  /** The version of a version file's name, or None for any other file in the log directory. */
  def versionOf(name: String): Option[Long] = name match {
    case NamePattern(digits) => Some(digits.toLong)
    case _ => None
  }

  /** Encodes actions as a version file; compressed means `01 01` + gzip. */
  def encode(actions: Seq[Action], compressed: Boolean): Array[Byte] = {
    val text = new StringBuilder
    actions.foreach(a => text.append(ActionSerde.toJson(a)).append('\n'))
    val json = text.toString.getBytes(UTF_8)
    if (!compressed) json
    else {
      val out = new ByteArrayOutputStream(json.length / 4 + 64)
      out.write(CompressedHeader)
      val gz = new GZIPOutputStream(out)
      try gz.write(json)
      finally gz.close()
      out.toByteArray
    }
  }

  /** Decodes a version file read from `file`; the path is only used in error messages. */
  def decode(file: Path, bytes: Array[Byte]): Seq[Action] = {
    val text = new String(uncompress(file, bytes), UTF_8)
    val lines = text.split('\n').iterator.zipWithIndex.filter(_._1.trim.nonEmpty).toVector
    if (lines.isEmpty) {
      throw IndexTablesErrors.unreadableVersionFile(file, "the file holds no actions")
    }
    lines.map { case (line, index) =>
      try ActionSerde.fromJson(line)
      catch {
        case NonFatal(e) =>
          throw IndexTablesErrors.unreadableVersionFile(
            file,
            s"line ${index + 1}: ${e.getMessage}",
            e)
      }
    }
  }

  private def isGzipAt(bytes: Array[Byte], offset: Int): Boolean =
    bytes.length >= offset + 2 && bytes(offset) == GzipMagic0 && bytes(offset + 1) == GzipMagic1

  private def uncompress(file: Path, bytes: Array[Byte]): Array[Byte] =
    if (bytes.length >= 2 && bytes(0) == 0x01 && bytes(1) == 0x01) {
      if (!isGzipAt(bytes, 2)) {
        throw IndexTablesErrors.unreadableVersionFile(
          file,
          "header 01 01 is not followed by a gzip stream (file truncated or corrupt)")
      }
      gunzip(file, bytes, 2)
    } else if (isGzipAt(bytes, 0)) {
      gunzip(file, bytes, 0)
    } else {
      bytes
    }

  private def gunzip(file: Path, bytes: Array[Byte], offset: Int): Array[Byte] =
    try {
      val in = new GZIPInputStream(new ByteArrayInputStream(bytes, offset, bytes.length - offset))
      try in.readAllBytes()
      finally in.close()
    } catch {
      case e: IOException =>
        throw IndexTablesErrors.unreadableVersionFile(
          file,
          s"corrupt or truncated gzip data (${e.getMessage})",
          e)
    }
}
