package io.indextables.spark.storage

import java.io.{File, FileNotFoundException, IOException, RandomAccessFile}
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.StandardOpenOption
import java.nio.file.{AtomicMoveNotSupportedException, FileAlreadyExistsException, Files}
import java.nio.file.{FileVisitResult, NoSuchFileException, SimpleFileVisitor, StandardCopyOption}
import java.nio.file.attribute.BasicFileAttributes
import java.nio.file.{Path => NioPath}
import java.util.UUID

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path

/**
 * [[LogStore]] on the local file system, through java.nio.
 *
 * `putIfAbsent` writes a hidden temp file in the target's directory, forces it to disk and then
 * hard-links it to the target name. Creating a link fails if the name exists, which gives
 * put-if-absent without locks, and the target appears only with its full content.
 */
object LocalLogStore extends LogStore {

  private def toNio(path: Path): NioPath = new java.io.File(path.toUri.getPath).toPath

  override def read(path: Path): Array[Byte] =
    try Files.readAllBytes(toNio(path))
    catch {
      case _: NoSuchFileException => throw new FileNotFoundException(s"File $path does not exist")
    }

  override def readRange(path: Path, offset: Long, length: Int): Array[Byte] = {
    val out = new Array[Byte](length)
    val file =
      try new RandomAccessFile(toNio(path).toFile, "r")
      catch {
        case _: FileNotFoundException =>
          throw new FileNotFoundException(s"File $path does not exist")
      }
    try {
      file.seek(offset)
      file.readFully(out)
    } finally file.close()
    out
  }

  override def putIfAbsent(path: Path, bytes: Array[Byte]): Boolean = {
    val target = toNio(path)
    Files.createDirectories(target.getParent)
    if (Files.exists(target)) return false
    withDurableTemp(target, bytes) { temp =>
      try {
        Files.createLink(target, temp)
        true
      } catch {
        case _: FileAlreadyExistsException => false
      }
    }
  }

  /** Writes `bytes` to a synced temp file beside `target`, publishes it, then removes the temp. */
  private def withDurableTemp[T](target: NioPath, bytes: Array[Byte])(
      publish: NioPath => T): T = {
    val temp = target.getParent.resolve(s".${target.getFileName}.${UUID.randomUUID()}.tmp")
    try {
      val channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
      try {
        val buf = ByteBuffer.wrap(bytes)
        while (buf.hasRemaining) channel.write(buf)
        channel.force(true)
      } finally channel.close()
      publish(temp)
    } finally Files.deleteIfExists(temp)
  }

  override def list(dir: Path): Seq[Path] = entries(dir, p => Files.isRegularFile(p))

  private def entries(dir: Path, keep: NioPath => Boolean): Seq[Path] = {
    val nioDir = toNio(dir)
    if (!Files.isDirectory(nioDir)) Seq.empty
    else {
      val stream = Files.list(nioDir)
      try {
        stream.iterator().asScala
          .filter(keep)
          .map(p => new Path(dir, p.getFileName.toString))
          .toVector
          .sortBy(_.getName)
      } finally stream.close()
    }
  }

  override def exists(path: Path): Boolean = Files.exists(toNio(path))

  override def overwrite(path: Path, bytes: Array[Byte]): Unit = {
    val target = toNio(path)
    Files.createDirectories(target.getParent)
    withDurableTemp(target, bytes) { temp =>
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
    }
  }

  override def listDirectories(dir: Path): Seq[Path] = entries(dir, p => Files.isDirectory(p))

  override def listRecursively(dir: Path): Iterator[FileInfo] = {
    val root = toNio(dir)
    if (!Files.isDirectory(root)) Iterator.empty
    else {
      // A file that another writer removes while the walk runs (a version file's temporary
      // copy, renamed into place) is simply not listed; Files.walk would fail the listing.
      val out = Vector.newBuilder[FileInfo]
      Files.walkFileTree(
        root,
        new SimpleFileVisitor[NioPath] {
          override def visitFile(p: NioPath, attrs: BasicFileAttributes)
              : FileVisitResult = {
            if (attrs.isRegularFile) {
              out += FileInfo(
                new Path(dir, root.relativize(p).toString),
                attrs.size(),
                attrs.lastModifiedTime().toMillis)
            }
            FileVisitResult.CONTINUE
          }
          override def visitFileFailed(p: NioPath, e: IOException): FileVisitResult =
            e match {
              case _: NoSuchFileException => FileVisitResult.CONTINUE
              case other => throw other
            }
          override def postVisitDirectory(d: NioPath, e: IOException)
              : FileVisitResult = {
            if (e != null && !e.isInstanceOf[NoSuchFileException]) throw e
            FileVisitResult.CONTINUE
          }
        }
      )
      out.result().iterator
    }
  }

  override def status(path: Path): FileInfo =
    try {
      // One call for both: size and modification time of the same file.
      val a =
        Files.readAttributes(toNio(path), classOf[java.nio.file.attribute.BasicFileAttributes])
      FileInfo(path, a.size, a.lastModifiedTime.toMillis)
    } catch {
      case _: NoSuchFileException => throw new FileNotFoundException(s"File $path does not exist")
    }

  override def delete(path: Path): Boolean = Files.deleteIfExists(toNio(path))

  /** Moves `local` into place: atomically where the two are on one file system. */
  override def upload(local: File, dest: Path): Unit = {
    val target = toNio(dest)
    Files.createDirectories(target.getParent)
    try Files.move(local.toPath, target, StandardCopyOption.ATOMIC_MOVE)
    catch { case _: AtomicMoveNotSupportedException => Files.move(local.toPath, target) }
  }

  override def localCopy(path: Path, identity: String, cache: LocalSplitCache.Settings): File =
    toNio(path).toFile
}
