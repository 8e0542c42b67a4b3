package io.indextables.spark.write

import java.io.File
import java.nio.file.Files

import scala.collection.mutable.ArrayBuffer

import org.apache.commons.io.FileUtils
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}
import org.apache.spark.sql.indextables.SparkTaskMetricsBridge

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.filters.AnalyzedPredicate
import io.indextables.spark.transaction.AddAction
import io.indextables.spark.util.NativeLibrary

/**
 * What one task wrote: the add actions of its splits, already moved into the table, its rows,
 * and the shuffle bytes it read (an optimized write's measure of its input).
 */
final case class IndexTablesCommitMessage(adds: Seq[AddAction], rows: Long, shuffleBytes: Long)
    extends WriterCommitMessage

/**
 * One write task. Rows go to the split writer the plan chose; each finished split is moved into
 * the table at once, and `commit` reports them to the driver, which makes them visible in one
 * log commit. `abort` cancels native work and deletes every split this task moved. Each finished
 * split also adds its bytes and rows to the task's output metrics (the Spark UI's "Output") as
 * it is uploaded. Runs on an executor, on one thread.
 */
final class IndexTables4SparkDataWriter(plan: WritePlan, partitionId: Int, taskId: Long)
    extends DataWriter[InternalRow] {

  NativeLibrary.ensureLoaded()

  private val workDir: File =
    Files.createTempDirectory(s"indextables-write-$partitionId-$taskId-").toFile
  private val ctx = new SplitWriterContext(
    plan.writeSchema,
    plan.indexSchema,
    plan.timeZone,
    workDir,
    plan.heapSize,
    plan.batchRows,
    plan.maxRowsPerSplit,
    plan.statsTruncateAt)
  private val splitWriter: SplitFileWriter = (plan.companion, plan.path) match {
    case (Some(companion), _) => new CompanionSplitWriter(ctx, companion)
    case (None, WritePath.ArrowFfi) => new ArrowFfiSplitWriter(ctx)
    case (None, WritePath.BatchDocuments) => new DocumentSplitWriter(ctx)
  }
  private val uploader = new SplitUploader(plan)
  private val added = ArrayBuffer.empty[AddAction]
  private val check = plan.rowCheck.map(c => (c, AnalyzedPredicate.interpreted(c.bound)))
  private var rows = 0L

  override def write(row: InternalRow): Unit = {
    check.foreach { case (c, p) =>
      if (!p.eval(row)) throw IndexTablesErrors.replaceWhereViolation(
        c.table,
        c.predicate,
        row.toSeq(plan.writeSchema).zip(plan.writeSchema.fieldNames)
          .map { case (v, n) => s"$n=$v" }.mkString("[", ", ", "]").take(500))
    }
    rows += 1
    upload(splitWriter.write(row))
  }

  override def commit(): WriterCommitMessage = {
    upload(splitWriter.finish())
    IndexTablesCommitMessage(added.toList, rows, SparkTaskMetricsBridge.shuffleBytesRead)
  }

  override def abort(): Unit = {
    try splitWriter.close()
    finally added.foreach(uploader.deleteFiles)
  }

  override def close(): Unit = {
    try splitWriter.close()
    finally FileUtils.deleteQuietly(workDir)
  }

  private def upload(splits: Seq[LocalSplit]): Unit = splits.foreach { s =>
    // Measured before the upload, which may move the local file away.
    val parquetBytes = s.companion.map(c => new File(c.localPath).length()).getOrElse(0L)
    val (relative, size) = uploader.upload(s)
    SparkTaskMetricsBridge.addOutput(size + parquetBytes, s.numDocs)
    added += AddAction(
      path = relative,
      partitionValues = s.partitionValues,
      size = size,
      modificationTime = System.currentTimeMillis(),
      dataChange = true,
      stats = s.stats,
      minValues = Some(s.minValues),
      maxValues = Some(s.maxValues),
      numRecords = Some(s.numDocs),
      hasFooterOffsets = true,
      footerStartOffset = Some(s.footerStartOffset),
      footerEndOffset = Some(s.footerEndOffset),
      numMergeOps = Some(0),
      splitTags = if (s.tags.isEmpty) None else Some(s.tags),
      docMappingJson = Option(s.docMappingJson),
      companionSourceFiles = s.companion.map(c => Seq(c.relativePath)),
      companionFastFieldMode = plan.companion.map(_.fastFieldMode),
      companionSourceFileSizes = s.companion.map(_ => Seq(parquetBytes)),
      companionDocsInRowOrder = s.companion.map(_.docsInRowOrder)
    )
  }
}
