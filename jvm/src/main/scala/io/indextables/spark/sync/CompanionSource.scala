package io.indextables.spark.sync

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.types.StructType
import org.roaringbitmap.RoaringBitmap

import io.indextables.spark.IndexTablesErrors

/**
 * Where a companion index's rows live: a set of Parquet files below one root, which the index
 * reads but never writes. A Parquet directory is the first kind ([[ParquetDirectorySource]]); a
 * Delta or Iceberg table is another listing of the same shape (its live files, their partition
 * values, the schema its log records). Implementations run on the driver.
 */
trait CompanionSource {

  /** What the index's metadata records as `indextables.companion.sourceFormat`. */
  def format: String

  /** The qualified root the files' relative paths hang from: the index's sourceTablePath. */
  def root: Path

  /**
   * What the index's metadata records of the source besides its format and root, at every
   * sync: how to find a table in a catalog again, say.
   */
  def configuration: Map[String, String] = Map.empty

  /** Every key [[configuration]] may hold: a sync drops those it no longer sets. */
  def configurationKeys: Set[String] = Set.empty

  /** The live files and their partitioning, read now. */
  def list(): SourceListing

  /**
   * The same listing as [[list]], for an index that recorded `previous`: a source with a log
   * may read only the versions after it, and falls back to [[list]] whenever it cannot.
   */
  def listSince(previous: Option[PreviousSync]): SourceListing = list()

  /** The Spark schema of one of the listed files' data columns (without partition columns). */
  def dataSchemaOf(file: SourceFile): StructType

  /**
   * The rows of `file` (positions in it, from 0) that the source deleted without rewriting the
   * file: the rows its [[SourceFile.deletionVector]] names. Only for a file that has one.
   */
  def deletedRows(file: SourceFile): RoaringBitmap =
    throw IndexTablesErrors.internalError(s"a $format source has no deleted rows (${file.path})")
}

object CompanionSource {

  /**
   * `file` relative to `root` (both qualified), `/`-separated, when it lies below it on the same
   * file system.
   */
  def relativeTo(root: Path, file: Path): Option[String] = {
    val (r, f) = (root.toUri, file.toUri)
    val prefix = r.getPath.stripSuffix("/") + "/"
    val sameFs = f.getScheme == r.getScheme && f.getAuthority == r.getAuthority
    if (sameFs && f.getPath.startsWith(prefix)) Some(f.getPath.substring(prefix.length)) else None
  }
}

/**
 * A source table's deletion vector on one of its files: rows it deleted while keeping the file.
 *
 * @param id the vector's identity in the source: two files with one id delete the same rows
 */
final case class SourceDeletionVector(id: String)

/**
 * What the index knew of its source after its last sync, for a source that can read only what
 * changed since ([[CompanionSource.listSince]]).
 *
 * @param version the source version the index reflects
 * @param files   every live file of the source at that version, as the index recorded them (their
 *                modification time unknown: 0)
 */
final case class PreviousSync(version: Long, files: Seq[SourceFile])

/**
 * One Parquet file of a source.
 *
 * @param path            relative to the source root, `/`-separated (`day=2024-01-01/part-0.parquet`)
 * @param partitionValues every partition column to its value, as the log records it (the typed
 *                        value cast to string; null for NULL)
 */
final case class SourceFile(
    path: String,
    size: Long,
    modificationTime: Long,
    partitionValues: Map[String, String],
    deletionVector: Option[SourceDeletionVector] = None) {

  /** The id of [[deletionVector]], "" for none, as `companionSourceDeletionVectors` holds it. */
  def vectorId: String = deletionVector.fold("")(_.id)
}

/**
 * A source's files at one moment.
 *
 * @param partitionSchema the partition columns, in directory order, typed as Spark infers them
 * @param version         the source table's version listed (None: a directory has none)
 * @param dataSchema      the data columns as the source table's log records them, when it
 *                        records them (None: the first file's footer says)
 */
final case class SourceListing(
    files: Seq[SourceFile],
    partitionSchema: StructType,
    version: Option[Long] = None,
    dataSchema: Option[StructType] = None)
