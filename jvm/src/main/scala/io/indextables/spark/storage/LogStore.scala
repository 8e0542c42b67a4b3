package io.indextables.spark.transaction

import java.util.Locale

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * Storage for transaction-log files. Its key operation is [[putIfAbsent]], which makes
 * optimistic commits safe: of several writers racing for one version file, exactly one wins.
 * Implementations are thread-safe and hold no per-table state.
 */
trait LogStore {

  /** The whole content of `path`; throws `java.io.FileNotFoundException` if it is absent. */
  def read(path: Path): Array[Byte]

  /**
   * Writes `bytes` to `path` only if no file is there. Returns false, and changes nothing, when
   * the file already exists. A reader never sees a partially written file.
   */
  def putIfAbsent(path: Path, bytes: Array[Byte]): Boolean

  /** The files directly under `dir`, sorted by name; empty if `dir` does not exist. */
  def list(dir: Path): Seq[Path]

  def exists(path: Path): Boolean

  /**
   * Replaces `path` with `bytes` atomically: readers see either the old or the new content,
   * never a partial file. Used for pointers such as `_last_checkpoint`.
   */
  def overwrite(path: Path, bytes: Array[Byte]): Unit

  /** The subdirectories directly under `dir`, sorted by name; empty if `dir` does not exist. */
  def listDirectories(dir: Path): Seq[Path]

  /** The last-modified time of `path` in epoch milliseconds; throws if it is absent. */
  def modificationTime(path: Path): Long

  /** Deletes a file or an empty directory; false if nothing was there. */
  def delete(path: Path): Boolean
}

/** Picks the [[LogStore]] for a path from its scheme: `file` or none is local, else Hadoop. */
object LogStore {

  def forPath(path: Path, hadoopConf: Configuration): LogStore =
    Option(path.toUri.getScheme).map(_.toLowerCase(Locale.ROOT)) match {
      case None | Some("file") => LocalLogStore
      case Some(_) => new HadoopLogStore(hadoopConf)
    }
}
