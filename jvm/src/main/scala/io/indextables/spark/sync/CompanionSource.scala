package io.indextables.spark.sync

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.types.StructType

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

  /** The live files and their partitioning, read now. */
  def list(): SourceListing

  /** The Spark schema of one of the listed files' data columns (without partition columns). */
  def dataSchemaOf(file: SourceFile): StructType
}

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
    partitionValues: Map[String, String])

/**
 * A source's files at one moment.
 *
 * @param partitionSchema the partition columns, in directory order, typed as Spark infers them
 */
final case class SourceListing(files: Seq[SourceFile], partitionSchema: StructType)
