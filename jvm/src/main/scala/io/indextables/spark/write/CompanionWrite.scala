package io.indextables.spark.write

import java.io.File
import java.nio.file.{Files, StandardCopyOption}

import scala.jdk.CollectionConverters._
import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.mapreduce.Job
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.parquet.{ParquetOptions, ParquetUtils}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.{IndexKind, IndexedField, TableIndexSchema}
import io.indextables.spark.util.SerializableHadoopConf
import io.indextables.tantivy4java.core.{FieldType, Index}
import io.indextables.tantivy4java.query.Query
import io.indextables.tantivy4java.split.ParquetCompanionConfig
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * How a write of the companion layout stores a task's rows: as Parquet, written by Spark's own
 * Parquet writer with the session's Parquet settings (codec, block size), and an index-only split
 * over each file. Decided on the driver; immutable.
 *
 * @param parquetConf the Hadoop configuration Spark's Parquet writer takes, prepared on the
 *                    driver as Spark's own Parquet source prepares it
 * @param dataSchema  the columns the Parquet files hold: the table's less its partition columns,
 *                    whose values the directory and the log hold, as in a Hive-style table
 * @param fastFieldMode how the splits serve fast fields (tantivy4java's FastFieldMode)
 */
final case class CompanionWrite(
    parquetConf: SerializableHadoopConf,
    dataSchema: StructType,
    fastFieldMode: String) {

  /** tantivy4java's indexing of one Parquet file under `root`, as `schema` asks. */
  def indexing(root: String, schema: TableIndexSchema, heapSize: Long): ParquetCompanionConfig =
    CompanionWrite.config(
      root,
      schema.fields.filter(f => dataSchema.fieldNames.contains(f.name)),
      fastFieldMode,
      heapSize)
}

object CompanionWrite {

  /**
   * tantivy4java's indexing of Parquet files under `root` into `fields` (tokenizers, JSON and IP
   * fields, unindexed fields skipped), shared by writes and companion builds.
   */
  def config(root: String, fields: Seq[IndexedField], fastFieldMode: String, heapSize: Long)
      : ParquetCompanionConfig = {
    val tokenizers = fields.collect {
      case f if f.indexed && f.kind == IndexKind.Text => f.name -> f.tokenizer.getOrElse("default")
      case f if f.indexed && f.kind == IndexKind.RawString =>
        f.name -> "raw"
    }.toMap
    val config = new ParquetCompanionConfig(root)
      .withFastFieldMode(ParquetCompanionConfig.FastFieldMode.valueOf(fastFieldMode))
      .withTokenizerOverrides(tokenizers.asJava)
      .withWriterHeapSize(heapSize)
      // No hidden hash columns (16 MB per million rows each): aggregations group on the
      // fields themselves.
      .withStringFingerprints()
      // Each doc's field lengths, which BM25 (`_score`) normalizes by, as the `splits`
      // layout's indexes keep them: one byte per doc and text field.
      .withFieldnorms(true)
    val json = fields.collect { case f if f.indexed && f.kind == IndexKind.Json => f.name }
    val skipped = fields.collect { case f if !f.indexed => f.name }
    if (json.nonEmpty) config.withJsonFields(json: _*)
    if (skipped.nonEmpty) config.withSkipFields(skipped: _*)
    config
  }

  /**
   * Makes the companion split at `split` one segment, in place. Returns the merged split's
   * metadata (its footer offsets), or None when it held one segment already; and whether its
   * docs are in row order: doc d is row d of its `files` Parquet files read one after the other
   * in the order the add action lists them (`companionDocsInRowOrder`).
   *
   * `createFromParquet` reads the files in that order and flushes a segment each time its
   * writer heap fills, never merging them: a split of more rows than the heap holds has
   * several, each a run of consecutive rows, which the index lists in another order
   * (`CompanionDocOrderSuite`). One segment is in row order as it stands. Segments of one file
   * are merged in the order of their rows ([[segmentsInRowOrder]]), so the merged split is in
   * row order too; segments of several files are merged as the index lists them, and the split
   * is not. Statistics and the doc mapping stay those `createFromParquet` reported. Runs on an
   * executor; `workDir` holds the scratch files. Fails as `companionIndexFailed(source)` unless
   * the result is one segment of `docs` docs.
   */
  def toOneSegment(
      split: File,
      docs: Long,
      files: Int,
      workDir: File,
      heapSize: Long,
      source: String): (Option[QuickwitSplit.SplitMetadata], Boolean) = {
    val merged =
      try
        SplitSegments.mergeIntoOne(
          split.getAbsolutePath,
          workDir,
          heapSize,
          index => if (files == 1) segmentsInRowOrder(index, docs) else None)
      catch { case e: Exception => throw IndexTablesErrors.companionIndexFailed(source, e) }
    merged match {
      case None => (None, true)
      case Some(SplitSegments.Merged(path, md, ordered)) =>
        val segments = SplitSegments.count(path)
        if (md.getNumDocs != docs || segments != 1) throw IndexTablesErrors.companionIndexFailed(
          source,
          new IllegalStateException(
            s"merging its segments gave ${md.getNumDocs} rows of $docs in $segments segments"))
        Files.move(new File(path).toPath, split.toPath, StandardCopyOption.REPLACE_EXISTING)
        (Some(md), ordered)
    }
  }

  /** The hidden fast field of a companion split that holds each doc's row in its file. */
  private val RowInFile = "__pq_row_in_file"

  /**
   * The segment ids of the companion index of ONE Parquet file of `rows` rows, in the order of
   * the rows they hold, when each segment's docs are one run of consecutive rows in doc order;
   * None when they are not (or the index cannot say). Found with queries for single rows on
   * the hidden `__pq_row_in_file` column: the segment and doc holding row r start each run, and
   * a binary search finds where the run ends. About 20 queries of a few milliseconds a segment.
   */
  def segmentsInRowOrder(index: Index, rows: Long): Option[Seq[String]] = {
    val searcher = index.searcher()
    val schema = index.getSchema
    try {
      val ids = searcher.getSegmentIds.asScala.toIndexedSeq
      // The (segment ordinal, doc) holding `row`, when exactly one doc does.
      def at(row: Long): Option[(Int, Int)] = {
        val q = Query.rangeQuery(schema, RowInFile, FieldType.UNSIGNED, row, row, true, true)
        try {
          val r = searcher.search(q, 2)
          try r.getHits.asScala.toList match {
              case List(h) => Some((h.getDocAddress.getSegmentOrd, h.getDocAddress.getDoc))
              case _ => None
            }
          finally r.close()
        } finally q.close()
      }
      val order = mutable.ArrayBuffer[Int]()
      var row = 0L
      var ok = true
      while (ok && row < rows) at(row) match {
        case Some((segment, 0)) if !order.contains(segment) =>
          // The longest run from `row` of docs 0, 1, ... of `segment`.
          var known = 1L
          var above = rows - row + 1
          while (above - known > 1) {
            val mid = known + (above - known) / 2
            if (at(row + mid - 1).contains((segment, (mid - 1).toInt))) known = mid else above = mid
          }
          order += segment
          row += known
        case _ => ok = false
      }
      if (ok && order.size == ids.size) Some(order.map(ids).toList) else None
    } catch { case NonFatal(_) => None }
    finally { schema.close(); searcher.close() }
  }

  /**
   * The fast field mode of the splits this code writes, and of a BUILD that names none: HYBRID.
   * Numeric, boolean and date columns keep tantivy's own fast columns in the split; string and
   * text columns have none there, and an aggregation that needs one reads it from the Parquet
   * file, which holds it already. Measured on one Parquet file of 1,000,000 benchmark rows
   * (56.6 MB), with `message` as text: DISABLED made a 90.5 MB split in 33.9 s of CPU, HYBRID a
   * 56.0 MB split in 20.5 s; `message`'s own fast column was most of the difference.
   */
  val FastFieldMode = "HYBRID"

  /**
   * The fast field modes a companion index may be built with. PARQUET_ONLY is not offered: on
   * tantivy4java 0.31.0 it answered some presence filters with no rows and could not decode
   * decimal columns from Parquet (measured on the test suite), where HYBRID and DISABLED answer
   * every differential test as Parquet does.
   */
  val FastFieldModes: Seq[String] = Seq("HYBRID", "DISABLED")

  /** Prepares the Parquet side of a companion write of `schema` on the driver. */
  def plan(
      spark: SparkSession,
      hadoopConf: Configuration,
      schema: TableIndexSchema,
      table: String): CompanionWrite = {
    val dataSchema = schema.dataSchema
    // The index is built from the Parquet files: a column it holds must be in them.
    schema.fields.find(f => !f.stored && !schema.isPartitionColumn(f.name)).foreach { f =>
      throw IndexTablesErrors.companionIndexOnlyColumn(table, f.name)
    }
    // tantivy4java 0.31.0's companion address fields answered equality filters with rows of
    // other addresses (measured): until they hold, the type is refused, not misanswered.
    schema.fields.find(_.kind == IndexKind.Ip).foreach { f =>
      throw IndexTablesErrors.companionIpUnsupported(table, f.name)
    }
    val job = Job.getInstance(new Configuration(hadoopConf))
    val sqlConf = spark.sessionState.conf
    ParquetUtils.prepareWrite(
      sqlConf,
      job,
      dataSchema,
      new ParquetOptions(Map.empty[String, String], sqlConf))
    // Microsecond timestamps, not the INT96 Spark 3.5 writes by default: tantivy4java reads
    // them as its own date-times, and every Parquet reader of the last decade understands them.
    job.getConfiguration.set(SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE.key, "TIMESTAMP_MICROS")
    CompanionWrite(new SerializableHadoopConf(job.getConfiguration), dataSchema, FastFieldMode)
  }
}
