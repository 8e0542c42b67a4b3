package io.indextables.spark.write

/**
 * A finished split file on the executor's local disk, before it is moved into the table.
 *
 * @param partitionValues partition column to value (null for a null value)
 * @param docMappingJson  the split's field mapping, as tantivy4java describes it
 * @param tags            split tags recorded in the log (see [[io.indextables.spark.schema.TokenLimit]])
 * @param companion       the Parquet file holding the split's rows, in the companion layout
 */
final case class LocalSplit(
    localPath: String,
    splitId: String,
    partitionValues: Map[String, String],
    numDocs: Long,
    footerStartOffset: Long,
    footerEndOffset: Long,
    docMappingJson: String,
    minValues: Map[String, String],
    maxValues: Map[String, String],
    tags: Set[String] = Set.empty,
    companion: Option[CompanionFile] = None,
    stats: Option[String] = None)

/**
 * A finished Parquet file of the companion layout on the executor's local disk.
 *
 * @param relativePath where it goes in the table: the path its split's manifest names
 * @param docsInRowOrder whether the split's doc d is row d of the file
 */
final case class CompanionFile(localPath: String, relativePath: String, docsInRowOrder: Boolean)

/**
 * Turns a task's rows into split files through one native API. Owned by one task thread.
 * `write` may finish splits when they reach the row limit and returns them; `finish` returns
 * the rest; `close` cancels every native handle still open and deletes unfinished files.
 */
trait SplitFileWriter extends AutoCloseable {
  def write(row: org.apache.spark.sql.catalyst.InternalRow): Seq[LocalSplit]
  def finish(): Seq[LocalSplit]
}
