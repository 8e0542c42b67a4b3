package io.indextables.spark.transaction

import java.io.{ByteArrayOutputStream, DataOutputStream}
import java.nio.ByteBuffer
import java.util.UUID
import java.util.zip.CRC32

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.storage.LogStore

/**
 * The file of one deletion vector (see [[DeletionVectorDescriptor]]), laid out as Delta's:
 *
 * {{{
 *   byte 0         format version, 1
 *   offset (1)     int32 big-endian: dataSize, the bytes of magic and bitmap
 *                  int32 big-endian: magic 0x49544456 ("ITDV")
 *                  the bitmap, in Roaring's portable serialization (32-bit doc ids)
 *                  int32 big-endian: CRC-32 of magic and bitmap
 * }}}
 *
 * One vector per file, named after its split (`<split name without .split>.<uuid>.dv`, beside
 * the split) and written once, never overwritten: a later delete from the split writes a new
 * file, so a reader of an older version still finds the vector that version names. Reads check
 * the version, size, magic, checksum and the cardinality the log records, and fail with
 * `INDEXTABLES_DELETION_VECTOR_UNREADABLE` rather than serve a row the vector deletes.
 * Stateless and thread-safe; runs on the driver (writes) and executors (reads).
 */
object DeletionVectorFile {

  val FormatVersion: Byte = 1
  val Magic: Int = 0x49544456
  val Suffix = ".dv"

  /** Where the size field of the one vector of a file starts. */
  private val VectorOffset = 1

  /** The bytes of a file holding `bitmap`. */
  def encode(bitmap: RoaringBitmap): Array[Byte] = {
    bitmap.runOptimize()
    val body = ByteBuffer.allocate(4 + bitmap.serializedSizeInBytes())
    body.putInt(Magic)
    bitmap.serialize(body)
    val crc = new CRC32()
    crc.update(body.array(), 0, body.capacity())
    val out = new ByteArrayOutputStream(body.capacity() + 9)
    val data = new DataOutputStream(out)
    data.writeByte(FormatVersion.toInt)
    data.writeInt(body.capacity())
    data.write(body.array())
    data.writeInt(crc.getValue.toInt)
    data.flush()
    out.toByteArray
  }

  /** The path, relative to the table root, of a new vector file for the split at `splitPath`. */
  def newPath(splitPath: String): String =
    splitPath.stripSuffix(".split") + "." + UUID.randomUUID().toString + Suffix

  /**
   * Writes `bitmap` (the deleted docs of the split at `splitPath`, relative to `root`) to a new
   * file beside the split and returns its descriptor.
   */
  def write(store: LogStore, root: Path, splitPath: String, bitmap: RoaringBitmap)
      : DeletionVectorDescriptor = {
    val relative = newPath(splitPath)
    val bytes = encode(bitmap)
    val target = TablePaths.resolve(root, relative, "deletionVector")
    if (!store.putIfAbsent(target, bytes)) {
      throw IndexTablesErrors.internalError(s"the new deletion vector file $target exists")
    }
    DeletionVectorDescriptor(
      storageType = DeletionVectorDescriptor.RelativePath,
      pathOrInlineDv = relative,
      offset = Some(VectorOffset),
      sizeInBytes = bytes.length - 9,
      cardinality = bitmap.getLongCardinality
    )
  }

  /** Reads and checks the vector `d` of the split at `splitPath` in the table at `root`. */
  def read(store: LogStore, root: Path, splitPath: String, d: DeletionVectorDescriptor)
      : RoaringBitmap = {
    def fail(reason: String, cause: Throwable = null) =
      IndexTablesErrors.deletionVectorUnreadable(d.pathOrInlineDv, splitPath, reason, cause)
    val file = d.file.getOrElse(throw fail(
      s"its storage type '${d.storageType}' is not one this reader knows (only " +
        s"'${DeletionVectorDescriptor.RelativePath}', a file relative to the table root)"))
    val offset = d.offset.getOrElse(throw fail("the log gives no offset for it"))
    if (offset < 1 || d.sizeInBytes < 4 || d.cardinality < 0)
      throw fail(s"the log describes it as offset $offset, ${d.sizeInBytes} bytes, " +
        s"cardinality ${d.cardinality}")
    val path = TablePaths.resolve(root, file, "deletionVector")
    // One request: the version byte and the vector after it.
    val all =
      try store.readRange(path, 0, offset + d.sizeInBytes + 8)
      catch { case NonFatal(e) => throw fail(s"the file cannot be read (${e.getMessage})", e) }
    if (all.isEmpty || all(0) != FormatVersion)
      throw fail(s"its format version is ${all.headOption.getOrElse("missing")}, not 1")
    val bytes = java.util.Arrays.copyOfRange(all, math.min(offset, all.length), all.length)
    decode(bytes, d, fail(_))
  }

  /** The bitmap in `bytes` (size field, magic, bitmap, checksum), checked against `d`. */
  private def decode(
      bytes: Array[Byte],
      d: DeletionVectorDescriptor,
      fail: String => Throwable): RoaringBitmap = {
    if (bytes.length != d.sizeInBytes + 8)
      throw fail(s"it holds ${bytes.length} bytes where ${d.sizeInBytes + 8} were expected")
    val in = ByteBuffer.wrap(bytes)
    val size = in.getInt()
    if (size != d.sizeInBytes) throw fail(s"its size field says $size, the log ${d.sizeInBytes}")
    val crc = new CRC32()
    crc.update(bytes, 4, size)
    val stored = ByteBuffer.wrap(bytes, 4 + size, 4).getInt()
    if (stored != crc.getValue.toInt) throw fail("its checksum does not match its contents")
    if (in.getInt() != Magic) throw fail("it does not start with the deletion vector magic")
    val bitmap = new RoaringBitmap()
    try bitmap.deserialize(ByteBuffer.wrap(bytes, 8, size - 4).slice())
    catch { case NonFatal(e) => throw fail(s"its bitmap cannot be decoded (${e.getMessage})") }
    if (bitmap.getLongCardinality != d.cardinality)
      throw fail(
        s"it deletes ${bitmap.getLongCardinality} docs, the log says ${d.cardinality}")
    bitmap
  }
}
