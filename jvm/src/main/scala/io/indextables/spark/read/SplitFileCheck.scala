package io.indextables.spark.read

import java.io.FileNotFoundException
import java.nio.{ByteBuffer, ByteOrder}

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.storage.LogStore
import io.indextables.spark.util.BoundedCache

/**
 * Checks a split's footer in the JVM before tantivy4java opens it. The native reader trusts the
 * footer and aborts the whole process on a damaged one, so a missing, truncated or overwritten
 * split must be caught here, with an error naming the file. A split ends with:
 * `[bundle metadata: magic u32, version u32, JSON][u32 metadata length][hotcache][u32 hotcache length]`,
 * and the footer the log records starts at the bundle metadata. Thread-safe.
 */
object SplitFileCheck {
  private val BundleMagic = 0x1812beae
  private val mapper = new ObjectMapper()

  /**
   * Checks the split at `path` (its footer once per JVM for a given file) and returns what
   * identifies its content: path, length, modification time and footer offsets. A split is
   * immutable once committed, so whatever is derived from one identity stays true for it.
   */
  def verify(
      store: LogStore,
      path: Path,
      expectedSize: Option[Long],
      footerStart: Long,
      footerEnd: Long): String = {
    val where = path.toString
    def bad(why: String) = IndexTablesErrors.splitReadFailed(where, new IllegalStateException(why))
    val status =
      try store.status(path)
      catch { case _: FileNotFoundException => throw IndexTablesErrors.splitMissing(where) }
    val length = status.length
    expectedSize.foreach { s =>
      if (s != length) throw bad(s"the file has $length bytes, the log records $s")
    }
    if (footerEnd != length || footerStart < 0 || footerStart + 16 > footerEnd) {
      throw bad(s"footer offsets $footerStart-$footerEnd do not fit a file of $length bytes")
    }
    // The same file (path, length and modification time) with the same footer offsets was
    // checked already in this JVM.
    val key = s"$where|$length|${status.modificationTime}|$footerStart|$footerEnd"
    verified.getOrElseUpdate(key) {
      checkFooter(store, path, footerStart, footerEnd, bad)
      java.lang.Boolean.TRUE
    }
    key
  }

  // The footers checked so far, by file identity.
  private val verified = new BoundedCache[String, java.lang.Boolean](100000)

  private def checkFooter(
      store: LogStore,
      path: Path,
      footerStart: Long,
      footerEnd: Long,
      bad: String => Exception): Unit = {
    // Only the footer's byte range is read, never the whole file.
    val footer = store.readRange(path, footerStart, (footerEnd - footerStart).toInt)
    val buf = ByteBuffer.wrap(footer).order(ByteOrder.LITTLE_ENDIAN)
    val hotcacheLen = buf.getInt(footer.length - 4).toLong & 0xffffffffL
    val hotcacheStart = footer.length - 4 - hotcacheLen
    if (hotcacheStart < 4) throw bad("the hotcache length in the footer is out of range")
    val metadataLen = buf.getInt((hotcacheStart - 4).toInt).toLong & 0xffffffffL
    if (hotcacheStart - 4 - metadataLen != 0)
      throw bad("the footer's metadata length is inconsistent")
    if (metadataLen < 8) throw bad("the footer's metadata is too short for its header")
    if (buf.getInt(0) != BundleMagic)
      throw bad("the footer does not start with the split bundle magic")
    val json =
      new String(footer, 8, (metadataLen - 8).toInt, java.nio.charset.StandardCharsets.UTF_8)
    val files =
      try mapper.readTree(json).get("files")
      catch {
        case e: Exception => throw bad(s"the footer's file table is not JSON (${e.getMessage})")
      }
    if (files == null || !files.isObject) throw bad("the footer has no file table")
    val it = files.elements()
    while (it.hasNext) {
      val r = it.next()
      val end = r.path("end").asLong(-1L)
      if (end < 0 || end > footerStart) throw bad("the footer's file table points outside the data")
    }
  }
}
