package io.indextables.spark.write

import java.io.File
import java.net.InetAddress
import java.util.UUID

import scala.annotation.nowarn
import scala.jdk.CollectionConverters._
import scala.collection.mutable

import org.apache.commons.io.FileUtils
import org.apache.spark.sql.catalyst.InternalRow

import io.indextables.spark.schema.{IndexKind, IndexedField, TokenLimit}
import io.indextables.spark.stats.SplitStatistics
import io.indextables.tantivy4java.core.{Index, IndexWriter, Schema, SchemaBuilder}
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * Writes rows through tantivy4java's batch-document API: one index per partition value in a
 * local directory, fed batches of documents encoded by [[DocumentBatchEncoder]] (the buffer
 * format of BatchDocumentBuilder, built in one pass), then turned into a split with
 * QuickwitSplit.convertIndexFromPath. Used when a column needs what the Arrow FFI path cannot
 * do (see [[WritePathSelector]]). Owned by one task thread; `close` drops every open index.
 */
final class DocumentSplitWriter(ctx: SplitWriterContext) extends SplitFileWriter {
  private val dataFields: Seq[(Int, IndexedField)] = ctx.indexSchema.fields.map { f =>
    (ctx.writeSchema.fieldIndex(f.name), f)
  }
  private val textOrdinals = dataFields.collect { case (i, f) if f.kind == IndexKind.Text => i }
  private val open = mutable.LinkedHashMap.empty[Seq[String], PartitionIndex]
  private lazy val nodeId =
    try InetAddress.getLocalHost.getHostName
    catch { case _: Exception => "node" }

  /** One partition value's index under construction. */
  private final class PartitionIndex(val key: Seq[String]) {
    val dir = new File(ctx.workDir, s"index-${UUID.randomUUID()}")
    val schema: Schema = DocumentSplitWriter.buildSchema(ctx.indexSchema.fields)
    val index = new Index(schema, dir.getAbsolutePath, false)
    val writer: IndexWriter = index.writer(ctx.heapSize.toInt, 1)
    val batch = new DocumentBatchEncoder(dataFields)
    var rows = 0L
    val stats: SplitStatistics = ctx.newStatistics()
    var longTokens = false

    def add(row: InternalRow): Unit = {
      if (!longTokens) longTokens = textOrdinals.exists { i =>
        // A value of at most 255 UTF-8 bytes cannot hold a longer token: skip the scan.
        !row.isNullAt(i) && {
          val value = row.getUTF8String(i)
          value.numBytes() > TokenLimit.MaxTokenBytes && TokenLimit.mayDropTokens(value.toString)
        }
      }
      batch.add(row)
      stats.update(row)
      rows += 1
      if (batch.documentCount >= ctx.batchRows || batch.size >= DocumentSplitWriter.MaxBatchBytes)
        flush()
    }

    def flush(): Unit = if (batch.documentCount > 0) writer.addDocumentsByBuffer(batch.finish())

    // getDocMappingJson is deprecated in 0.31.0 but is the only source of the split's mapping.
    @nowarn("cat=deprecation")
    def finish(): LocalSplit = {
      try {
        flush()
        writer.commit()
        // Lets the merges tantivy started in the background end before the files are packed;
        // the writer is spent afterwards.
        writer.waitMergingThreads()
        writer.close()
        DocumentSplitWriter.mergeToOneSegment(index, ctx.heapSize)
      } finally close()
      val out = new File(ctx.workDir, s"part-${UUID.randomUUID()}.split")
      val config = new QuickwitSplit.SplitConfig("indextables", "spark", nodeId)
      val md = QuickwitSplit.convertIndexFromPath(dir.getAbsolutePath, out.getAbsolutePath, config)
      FileUtils.deleteQuietly(dir)
      val values = ctx.indexSchema.partitionColumns.zip(key).toMap
      LocalSplit(
        out.getAbsolutePath,
        md.getSplitId,
        values,
        md.getNumDocs,
        md.getFooterStartOffset,
        md.getFooterEndOffset,
        DocMapping.readable(md.getDocMappingJson),
        stats.minValues,
        stats.maxValues,
        if (longTokens) Set(TokenLimit.LongTokensTag) else Set.empty,
        stats = stats.statsJson
      )
    }

    def close(): Unit = {
      try writer.close()
      finally
        try index.close()
        finally schema.close()
    }
  }

  override def write(row: InternalRow): Seq[LocalSplit] = {
    val key = ctx.partitionKey(row)
    val p = open.getOrElseUpdate(key, new PartitionIndex(key))
    p.add(row)
    if (p.rows >= ctx.maxRowsPerSplit) {
      open.remove(key)
      Seq(p.finish())
    } else Nil
  }

  override def finish(): Seq[LocalSplit] = {
    val done = open.values.toList.map(_.finish())
    open.clear()
    done
  }

  override def close(): Unit = {
    open.values.foreach { p =>
      try p.close()
      catch { case _: Exception => }
      finally FileUtils.deleteQuietly(p.dir)
    }
    open.clear()
  }
}

object DocumentSplitWriter {

  /** A batch is handed to the native writer at this size even before `batchRows` rows. */
  val MaxBatchBytes: Int = 64 << 20

  /**
   * Merges the committed segments of `index` into one, waiting for the merge to end (tantivy
   * then deletes the merged segments' files, so the directory holds one segment and nothing
   * stray). A split of one segment runs each query, wildcard automata included, once, and its
   * documents are numbered 0 until n, so a full read needs no search. The indexing heap decides
   * how many segments there are to merge: one, with a heap that holds the split. `order` may
   * give the segment ids in the order their docs are to take; else they keep the index's.
   */
  def mergeToOneSegment(
      index: Index,
      heapSize: Long,
      order: Index => Option[Seq[String]] = _ => None): Unit = {
    index.reload()
    val segments = order(index).map(_.asJava).getOrElse {
      val searcher = index.searcher()
      try searcher.getSegmentIds
      finally searcher.close()
    }
    if (segments.size > 1) {
      val writer = index.writer(heapSize.toInt, 1)
      try {
        // tantivy's merge numbers the docs segment after segment, in the order given.
        writer.merge(segments)
        writer.waitMergingThreads()
      } finally writer.close()
    }
  }

  /**
   * The tantivy schema of the batch-document path, each field as its [[IndexedField]] says
   * (indexed, stored, fast, tokenizer). The string form of
   * `addJsonField` is deprecated in tantivy4java 0.31.0; its replacement builds a different doc
   * mapping, which would change the on-disk format of JSON fields, so it stays until that is
   * decided on its own.
   */
  @nowarn("cat=deprecation")
  def buildSchema(fields: Seq[IndexedField]): Schema = {
    val b = new SchemaBuilder()
    try {
      fields.foreach { f =>
        f.kind match {
          case IndexKind.RawString => b.addStringField(f.name, f.stored, f.indexed, f.fast)
          case IndexKind.Text =>
            b.addTextField(f.name, f.stored, f.fast, f.tokenizer.getOrElse("default"), "position")
          case IndexKind.Json => b.addJsonField(f.name, f.stored, "raw", "position")
          case IndexKind.Ip => b.addIpAddrField(f.name, f.stored, f.indexed, f.fast)
          case IndexKind.I64 => b.addIntegerField(f.name, f.stored, f.indexed, f.fast)
          case IndexKind.F64 => b.addFloatField(f.name, f.stored, f.indexed, f.fast)
          case IndexKind.Bool => b.addBooleanField(f.name, f.stored, f.indexed, f.fast)
          case IndexKind.DateTime => b.addDateField(f.name, f.stored, f.indexed, f.fast)
          case IndexKind.Bytes => b.addBytesField(f.name, f.stored, f.indexed, f.fast, "basic")
        }
      }
      b.build()
    } finally b.close()
  }
}
