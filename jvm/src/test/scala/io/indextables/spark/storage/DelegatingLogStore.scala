package io.indextables.spark.storage

import java.io.File

import org.apache.hadoop.fs.Path

/** A [[LogStore]] that hands every call to `inner`; tests override the calls they intercept. */
class DelegatingLogStore(inner: LogStore) extends LogStore {
  override def read(path: Path): Array[Byte] = inner.read(path)
  override def readRange(path: Path, offset: Long, length: Int): Array[Byte] =
    inner.readRange(path, offset, length)
  override def putIfAbsent(path: Path, bytes: Array[Byte]): Boolean =
    inner.putIfAbsent(path, bytes)
  override def list(dir: Path): Seq[Path] = inner.list(dir)
  override def listDirectories(dir: Path): Seq[Path] = inner.listDirectories(dir)
  override def listRecursively(dir: Path): Iterator[FileInfo] = inner.listRecursively(dir)
  override def exists(path: Path): Boolean = inner.exists(path)
  override def overwrite(path: Path, bytes: Array[Byte]): Unit = inner.overwrite(path, bytes)
  override def status(path: Path): FileInfo = inner.status(path)
  override def delete(path: Path): Boolean = inner.delete(path)
  override def upload(local: File, dest: Path): Unit = inner.upload(local, dest)
  override def localCopy(path: Path, identity: String, cache: LocalSplitCache.Settings): File =
    inner.localCopy(path, identity, cache)
}
