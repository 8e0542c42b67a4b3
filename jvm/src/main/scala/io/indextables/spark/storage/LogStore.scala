package io.indextables.spark.storage

import java.io.File
import java.util.Locale

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.indextables.spark.util.BoundedCache

/**
 * The files of a table: its transaction log and its splits. The log's key operation is
 * [[putIfAbsent]], which makes optimistic commits safe: of several writers racing for one
 * version file, exactly one wins. Implementations are thread-safe and hold no per-table state.
 * Paths keep the scheme they were given (`s3a://` stays `s3a://`).
 */
trait LogStore {

  /** The whole content of `path`; throws `java.io.FileNotFoundException` if it is absent. */
  def read(path: Path): Array[Byte]

  /** `length` bytes of `path` from `offset`; throws `FileNotFoundException` if it is absent. */
  def readRange(path: Path, offset: Long, length: Int): Array[Byte]

  /**
   * Writes `bytes` to `path` only if no file is there. Returns false, and changes nothing, when
   * the file already exists. A reader never sees a partially written file.
   */
  def putIfAbsent(path: Path, bytes: Array[Byte]): Boolean

  /** The files directly under `dir`, sorted by name; empty if `dir` does not exist. */
  def list(dir: Path): Seq[Path]

  /** The subdirectories directly under `dir`, sorted by name; empty if `dir` does not exist. */
  def listDirectories(dir: Path): Seq[Path]

  /** Every file below `dir`, at any depth, in no particular order. */
  def listRecursively(dir: Path): Iterator[FileInfo]

  def exists(path: Path): Boolean

  /**
   * Replaces `path` with `bytes` atomically: readers see either the old or the new content,
   * never a partial file. Used for pointers such as `_last_checkpoint`.
   */
  def overwrite(path: Path, bytes: Array[Byte]): Unit

  /** The length and modification time of `path`; throws `FileNotFoundException` if absent. */
  def status(path: Path): FileInfo

  /** The last-modified time of `path` in epoch milliseconds; throws if it is absent. */
  def modificationTime(path: Path): Long = status(path).modificationTime

  /** Deletes a file or an empty directory; false if nothing was there. */
  def delete(path: Path): Boolean

  /**
   * Publishes the finished local file `local` at `dest`, whole or not at all. The local file is
   * consumed: moved where that is possible, else deleted once copied.
   */
  def upload(local: File, dest: Path): Unit

  /**
   * A local file holding the content of `path`, for readers that need one (tantivy4java reads
   * splits on the local disk and on S3 itself, not on every store). `identity` names the
   * content: a cached copy is reused only under the same identity.
   */
  def localCopy(path: Path, identity: String, cache: LocalSplitCache.Settings): File
}

/** A file's length and last-modified time (epoch milliseconds). */
final case class FileInfo(path: Path, length: Long, modificationTime: Long)

/** Picks the [[LogStore]] for a path from its scheme, in one place. */
object LogStore {

  /** The schemes of S3, served by the AWS SDK. */
  val S3Schemes: Set[String] = Set("s3", "s3a", "s3n")

  /** The schemes of Azure Blob Storage (and ADLS Gen2), served by the Azure SDK. */
  val AzureSchemes: Set[String] = Set("abfs", "abfss", "wasb", "wasbs")

  def scheme(path: Path): Option[String] =
    Option(path.toUri.getScheme).map(_.toLowerCase(Locale.ROOT))

  def isS3(path: Path): Boolean = scheme(path).exists(S3Schemes)

  def isAzure(path: Path): Boolean = scheme(path).exists(AzureSchemes)

  /** Whether `path` lives in an object store this plugin reaches through a cloud SDK. */
  def isObjectStore(path: Path): Boolean = isS3(path) || isAzure(path)

  /** Whether `path` is on the local file system (`file:` or no scheme). */
  def isLocal(path: Path): Boolean = scheme(path).forall(_ == "file")

  /**
   * The most S3 and Azure stores one JVM keeps, one per distinct settings (credentials,
   * endpoint, sizes), in one registry for both: past it, the store asked for least recently is
   * dropped. A dropped store is not closed, since a log handle or a read may still hold it; once
   * nothing does, its client and its connections are collected (the SDKs' connection reapers
   * hold their pools weakly). Temporary credentials that change from job to job thus no longer
   * pile up clients in a long-lived JVM.
   */
  val MaxSharedStores = 32

  private val shared = new BoundedCache[AnyRef, LogStore](MaxSharedStores)

  /** The store for `settings`, made by `make` when the registry holds none. */
  private[storage] def sharedStore[S <: LogStore](settings: AnyRef)(make: => S): S =
    shared.getOrElseUpdate(settings)(make).asInstanceOf[S]

  /** How many S3 and Azure stores this JVM keeps now. */
  def sharedStoreCount: Int = shared.size

  /**
   * The store for `path`. Object-store settings (credentials, endpoint, region) are read from
   * `hadoopConf`, where the driver puts the resolved `spark.indextables.*` storage settings.
   */
  def forPath(path: Path, hadoopConf: Configuration): LogStore =
    scheme(path) match {
      case None | Some("file") => LocalLogStore
      case Some(s) if S3Schemes(s) => S3LogStore.forSettings(AwsSettings(hadoopConf))
      case Some(s) if AzureSchemes(s) => AzureLogStore.forSettings(AzureSettings(hadoopConf))
      case Some(_) => new HadoopLogStore(hadoopConf)
    }

  /**
   * `path` made absolute: local and Hadoop paths against their file system (a relative path is
   * resolved against the working directory), object-store URIs as they are.
   */
  def qualify(path: Path, hadoopConf: Configuration): Path =
    if (isObjectStore(path)) {
      val uri = path.toUri
      val key = Option(uri.getPath).getOrElse("").stripSuffix("/")
      new Path(new java.net.URI(
        uri.getScheme,
        uri.getAuthority,
        if (key.isEmpty) "/" else key,
        null,
        null))
    } else path.getFileSystem(hadoopConf).makeQualified(path)
}
