package io.indextables.spark.write

import java.io.File
import java.util.UUID

import scala.jdk.CollectionConverters._
import scala.annotation.nowarn
import scala.collection.mutable

import org.apache.hadoop.mapreduce.{TaskAttemptID, TaskID, TaskType}
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.parquet.ParquetOutputWriter

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.{IndexKind, PartitionValues, TokenLimit}
import io.indextables.spark.stats.SplitStatistics
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * Writes rows in the companion layout: the rows of each partition value go to a Parquet file of
 * their own, through Spark's Parquet writer; when it is finished (at the row limit, or at the
 * task's end) tantivy4java indexes it into an index-only split
 * (`QuickwitSplit.createFromParquet`) whose manifest names the file by its path relative to the
 * table. Both are made under this task's work directory, laid out as in the table, and moved
 * into it together by [[SplitUploader]]. Owned by one task thread.
 */
final class CompanionSplitWriter(ctx: SplitWriterContext, companion: CompanionWrite)
    extends SplitFileWriter {
  private val partitionColumns = ctx.indexSchema.partitionColumns
  private val root = new File(ctx.workDir, "companion")
  private val toParquetRow = UnsafeProjection.create(companion.dataSchema.fields.toSeq.map { f =>
    val i = ctx.writeSchema.fieldIndex(f.name)
    BoundReference(i, f.dataType, f.nullable)
  })

  /** One Parquet file being written: its path relative to the table, its rows so far. */
  private final class Open(val relative: String, val values: Map[String, String]) {
    val file = new File(root, relative)
    file.getParentFile.mkdirs()
    val writer = new ParquetOutputWriter(file.getPath, attemptContext)
    val stats: SplitStatistics = ctx.newStatistics()
    var rows = 0L
    var longTokens = false
  }

  // Tokenized text columns: a token over tantivy's limit is dropped from the index, so a split
  // holding one is tagged and searched without token queries (see TokenLimit).
  private val textOrdinals = ctx.indexSchema.fields.collect {
    case f
        if f.indexed && f.kind == IndexKind.Text && companion.dataSchema.fieldNames.contains(
          f.name) =>
      ctx.writeSchema.fieldIndex(f.name)
  }

  private val open = mutable.LinkedHashMap.empty[Seq[String], Open]

  private lazy val attemptContext = new TaskAttemptContextImpl(
    companion.parquetConf.value,
    new TaskAttemptID(new TaskID("indextables", 0, TaskType.MAP, 0), 0))

  override def write(row: InternalRow): Seq[LocalSplit] = {
    val key = ctx.partitionKey(row)
    val o = open.getOrElseUpdate(key, newFile(key))
    o.stats.update(row)
    if (!o.longTokens) o.longTokens = textOrdinals.exists { i =>
      !row.isNullAt(i) && {
        val value = row.getUTF8String(i)
        value.numBytes() > TokenLimit.MaxTokenBytes && TokenLimit.mayDropTokens(value.toString)
      }
    }
    o.writer.write(toParquetRow(row))
    o.rows += 1
    if (o.rows >= ctx.maxRowsPerSplit) {
      open.remove(key)
      Seq(index(o))
    } else Nil
  }

  override def finish(): Seq[LocalSplit] = {
    val all = open.values.toList
    open.clear()
    all.map(index)
  }

  private def newFile(key: Seq[String]): Open = {
    val values = partitionColumns.zip(key).toMap
    val dir = PartitionValues.directory(partitionColumns, values)
    val name = s"part-${UUID.randomUUID()}.parquet"
    new Open(if (dir.isEmpty) name else s"$dir/$name", values)
  }

  /** Closes the Parquet file of `o` and indexes it into a split beside it. */
  // getDocMappingJson is deprecated in 0.31.0 but is the only source of the split's mapping.
  @nowarn("cat=deprecation")
  private def index(o: Open): LocalSplit = {
    o.writer.close()
    val split = new File(ctx.workDir, s"${o.file.getName.stripSuffix(".parquet")}.split")
    val md =
      try QuickwitSplit.createFromParquet(
          List(o.file.getAbsolutePath).asJava,
          split.getAbsolutePath,
          companion.indexing(root.getAbsolutePath, ctx.indexSchema, ctx.heapSize))
      catch {
        case e: Exception => throw IndexTablesErrors.companionIndexFailed(o.relative, e)
      }
    if (md.getNumDocs != o.rows) throw IndexTablesErrors.companionIndexFailed(
      o.relative,
      new IllegalStateException(s"the split holds ${md.getNumDocs} rows of ${o.rows}"))
    val (merged, inRowOrder) =
      CompanionWrite.toOneSegment(split, o.rows, 1, ctx.workDir, ctx.heapSize, o.relative)
    val packed = merged.getOrElse(md)
    LocalSplit(
      split.getAbsolutePath,
      md.getSplitId,
      o.values,
      md.getNumDocs,
      packed.getFooterStartOffset,
      packed.getFooterEndOffset,
      md.getDocMappingJson,
      o.stats.minValues,
      o.stats.maxValues,
      if (o.longTokens) Set(TokenLimit.LongTokensTag) else Set.empty,
      companion = Some(CompanionFile(o.file.getAbsolutePath, o.relative, inRowOrder)),
      stats = o.stats.statsJson
    )
  }

  override def close(): Unit = {
    open.values.foreach(o => scala.util.Try(o.writer.close()))
    open.clear()
  }
}
