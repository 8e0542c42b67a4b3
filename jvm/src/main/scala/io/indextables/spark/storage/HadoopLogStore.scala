package io.indextables.spark.storage

import java.io.{File, FileNotFoundException}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException, FileContext, Options, Path}

/**
 * [[LogStore]] on any Hadoop file system, for paths that are not local.
 *
 * `putIfAbsent` relies on `FileSystem.create(path, overwrite = false)` failing when the file
 * exists. That is atomic on HDFS and on object stores with conditional writes; on a store
 * without them two writers may both succeed, so such stores need a dedicated LogStore.
 */
final class HadoopLogStore(hadoopConf: Configuration) extends LogStore {

  override def read(path: Path): Array[Byte] = {
    val fs = path.getFileSystem(hadoopConf)
    val in = fs.open(path)
    try in.readAllBytes()
    finally in.close()
  }

  override def readRange(path: Path, offset: Long, length: Int): Array[Byte] = {
    val out = new Array[Byte](length)
    val in = path.getFileSystem(hadoopConf).open(path)
    try in.readFully(offset, out)
    finally in.close()
    out
  }

  override def putIfAbsent(path: Path, bytes: Array[Byte]): Boolean = {
    val fs = path.getFileSystem(hadoopConf)
    try {
      val out = fs.create(path, false)
      try out.write(bytes)
      finally out.close()
      true
    } catch {
      case _: FileAlreadyExistsException => false
    }
  }

  override def list(dir: Path): Seq[Path] = {
    val fs = dir.getFileSystem(hadoopConf)
    try fs.listStatus(dir).toSeq.filter(_.isFile).map(_.getPath).sortBy(_.getName)
    catch { case _: FileNotFoundException => Seq.empty }
  }

  override def exists(path: Path): Boolean = path.getFileSystem(hadoopConf).exists(path)

  /**
   * Writes a hidden temp file beside `path`, then renames it over `path` with
   * `Options.Rename.OVERWRITE` (atomic on HDFS). File systems without that rename fall back to
   * delete-then-rename, where a reader can briefly find no file; readers then use the log.
   */
  override def overwrite(path: Path, bytes: Array[Byte]): Unit = {
    val fs = path.getFileSystem(hadoopConf)
    val temp = new Path(path.getParent, s".${path.getName}.${java.util.UUID.randomUUID()}.tmp")
    val out = fs.create(temp, true)
    try out.write(bytes)
    finally out.close()
    val renamed =
      try {
        FileContext.getFileContext(path.toUri, hadoopConf)
          .rename(temp, path, Options.Rename.OVERWRITE)
        true
      } catch {
        case _: UnsupportedOperationException | _: java.io.IOException =>
          fs.rename(temp, path) || (fs.delete(path, false) && fs.rename(temp, path))
      }
    if (!renamed) {
      fs.delete(temp, false)
      throw new java.io.IOException(s"Could not replace $path")
    }
  }

  override def listDirectories(dir: Path): Seq[Path] = {
    val fs = dir.getFileSystem(hadoopConf)
    try fs.listStatus(dir).toSeq.filter(_.isDirectory).map(_.getPath).sortBy(_.getName)
    catch { case _: FileNotFoundException => Seq.empty }
  }

  override def listRecursively(dir: Path): Iterator[FileInfo] = {
    val fs = dir.getFileSystem(hadoopConf)
    val it =
      try fs.listFiles(dir, true)
      catch { case _: FileNotFoundException => return Iterator.empty }
    new Iterator[FileInfo] {
      override def hasNext: Boolean = it.hasNext
      override def next(): FileInfo = {
        val s = it.next()
        FileInfo(s.getPath, s.getLen, s.getModificationTime)
      }
    }
  }

  override def status(path: Path): FileInfo = {
    val s = path.getFileSystem(hadoopConf).getFileStatus(path)
    FileInfo(path, s.getLen, s.getModificationTime)
  }

  override def delete(path: Path): Boolean = path.getFileSystem(hadoopConf).delete(path, false)

  /**
   * Copies `local` to a hidden name beside `dest`, then renames it into place, so that `dest`
   * appears whole; the local file is deleted.
   */
  override def upload(local: File, dest: Path): Unit = {
    val fs = dest.getFileSystem(hadoopConf)
    val temp = new Path(dest.getParent, s".${dest.getName}.${java.util.UUID.randomUUID()}.tmp")
    fs.copyFromLocalFile(true, true, new Path(local.getAbsolutePath), temp)
    if (!fs.rename(temp, dest)) {
      fs.delete(temp, false)
      throw new java.io.IOException(s"Could not rename $temp to $dest")
    }
  }

  override def localCopy(path: Path, identity: String, cache: LocalSplitCache.Settings): File =
    LocalSplitCache.get(identity, cache) { target =>
      path.getFileSystem(hadoopConf).copyToLocalFile(false, path, new Path(target.toURI), true)
    }
}
