package io.indextables.spark.write

import java.io.File

import scala.jdk.CollectionConverters._
import scala.collection.mutable

import org.apache.arrow.c.{ArrowArray, ArrowSchema, Data}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Cast, Expression, UnsafeProjection}
import org.apache.spark.sql.indextables.SparkArrowBridge
import org.apache.spark.sql.types.{StringType, StructField, StructType}

import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.stats.SplitStatistics
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * Writes rows through tantivy4java's Arrow FFI path. Rows are buffered into Arrow vectors by
 * Spark's own ArrowWriter and handed over one batch per native call through the C data
 * interface; the native side routes rows to one index per partition value. Partition columns are
 * exported as strings, so every partition type works and values match Hive's text form.
 * Owned by one task thread; `close` cancels the native handle if it is still open.
 */
final class ArrowFfiSplitWriter(ctx: SplitWriterContext) extends SplitFileWriter {
  private val schema = ctx.writeSchema
  private val partitionColumns = ctx.indexSchema.partitionColumns
  private val exportSchema = StructType(schema.fields.map { f =>
    if (partitionColumns.contains(f.name)) StructField(f.name, StringType, nullable = true) else f
  })
  private val toExportRow = UnsafeProjection.create(schema.fields.zipWithIndex.map { case (f, i) =>
    val ref: Expression = BoundReference(i, f.dataType, f.nullable)
    if (partitionColumns.contains(f.name)) Cast(ref, StringType, Some(ctx.timeZone)) else ref
  }.toSeq)
  private val arrowSchema = SparkArrowBridge.toArrowSchema(exportSchema)
  private val docMapping = DocMapping.forArrowFfi(ctx.indexSchema.fields)

  private val allocator: BufferAllocator = SparkArrowBridge.newAllocator("indextables-ffi-write")
  private val root = VectorSchemaRoot.create(arrowSchema, allocator)
  private val arrowWriter = SparkArrowBridge.newArrowWriter(root)

  private var handle = 0L
  private var rowsInBatch = 0
  private var rowsInSplit = 0L
  private val stats = mutable.LinkedHashMap.empty[Seq[String], SplitStatistics]

  override def write(row: InternalRow): Seq[LocalSplit] = {
    if (handle == 0L) begin()
    val key = ctx.partitionKey(row)
    stats.getOrElseUpdate(key, ctx.newStatistics()).update(row)
    arrowWriter.write(toExportRow(row))
    rowsInBatch += 1
    rowsInSplit += 1
    if (rowsInBatch >= ctx.batchRows || rowsInSplit >= ctx.maxRowsPerSplit) flushBatch()
    if (rowsInSplit >= ctx.maxRowsPerSplit) finishContext() else Nil
  }

  override def finish(): Seq[LocalSplit] =
    if (handle == 0L) Nil else { flushBatch(); finishContext() }

  private def begin(): Unit = {
    val cSchema = ArrowSchema.allocateNew(allocator)
    try {
      Data.exportSchema(allocator, arrowSchema, null, cSchema)
      handle = QuickwitSplit.beginSplitFromArrow(
        cSchema.memoryAddress(),
        partitionColumns.toArray,
        ctx.heapSize)
    } finally releaseIfUnconsumed(cSchema)
  }

  private def flushBatch(): Unit = if (rowsInBatch > 0) {
    arrowWriter.finish()
    val cArray = ArrowArray.allocateNew(allocator)
    val cSchema = ArrowSchema.allocateNew(allocator)
    try {
      Data.exportVectorSchemaRoot(allocator, root, null, cArray, cSchema)
      QuickwitSplit.addArrowBatch(handle, cArray.memoryAddress(), cSchema.memoryAddress())
    } finally {
      releaseIfUnconsumed(cArray)
      releaseIfUnconsumed(cSchema)
      arrowWriter.reset()
      rowsInBatch = 0
    }
  }

  private def finishContext(): Seq[LocalSplit] = {
    val outDir = new File(ctx.workDir, s"ffi-${java.util.UUID.randomUUID()}")
    outDir.mkdirs()
    val results =
      try QuickwitSplit.finishAllSplits(handle, outDir.getAbsolutePath).asScala
      finally handle = 0L
    val done = results.map { r =>
      val values = PartitionValues.fromNative(r.getPartitionValues.asScala.toMap)
      val key = partitionColumns.map(values.getOrElse(_, null))
      val st = stats.getOrElse(key, ctx.newStatistics())
      val split = LocalSplit(
        r.getSplitPath,
        r.getSplitId,
        values,
        r.getNumDocs,
        r.getFooterStartOffset,
        r.getFooterEndOffset,
        docMapping,
        st.minValues,
        st.maxValues,
        stats = st.statsJson)
      ArrowFfiSplitWriter.toOneSegment(split, ctx)
    }.toList
    stats.clear()
    rowsInSplit = 0
    done
  }

  /** The native side takes over what it imports; anything it did not take is released here. */
  private def releaseIfUnconsumed(s: ArrowSchema): Unit = {
    try if (s.snapshot().release != 0L) s.release()
    finally s.close()
  }
  private def releaseIfUnconsumed(a: ArrowArray): Unit = {
    try if (a.snapshot().release != 0L) a.release()
    finally a.close()
  }

  override def close(): Unit = {
    try if (handle != 0L) QuickwitSplit.cancelSplit(handle)
    finally {
      handle = 0L
      root.close()
      allocator.close()
    }
  }
}

object ArrowFfiSplitWriter {

  /**
   * `split` with its segments merged into one ([[SplitSegments.mergeIntoOne]]). The native
   * Arrow writer flushes a segment each time its heap fills and does not merge them; documents,
   * their order and the doc mapping stay as they were.
   */
  def toOneSegment(split: LocalSplit, ctx: SplitWriterContext): LocalSplit =
    SplitSegments.mergeIntoOne(split.localPath, ctx.workDir, ctx.heapSize) match {
      case None => split
      case Some(SplitSegments.Merged(path, md, _)) =>
        split.copy(
          localPath = path,
          splitId = md.getSplitId,
          numDocs = md.getNumDocs,
          footerStartOffset = md.getFooterStartOffset,
          footerEndOffset = md.getFooterEndOffset)
    }
}
