package io.indextables.spark.core

import org.apache.spark.sql.execution.streaming.Sink
import org.apache.spark.sql.indextables.{SparkLineShim, SparkWriteBridge}
import org.apache.spark.sql.streaming.OutputMode
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.{DataFrame, SQLContext}
import org.slf4j.LoggerFactory

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.transaction.StreamingTxn
import io.indextables.spark.write.{IndexTables4SparkWriteBuilder, StreamingBatch}

/**
 * The sink of a stream into a table by its path (`writeStream.format("indextables")
 * .start(path)`), with the stream's `partitionBy` columns: Spark gives those only to a V1 sink
 * (`StreamSinkProvider.createSink`), never to a DataSource V2 table, so a path stream takes this
 * route (as Delta's does) while `toTable` keeps the catalog table's V2 streaming write.
 *
 * Each micro-batch is a batch write of the batch's rows on the table's newest snapshot (the
 * same tasks, commit, merge on write and purge on write as a batch write), whose version also
 * records the query's id and the batch's epoch ([[StreamingTxn]]). Exactly once: a batch the
 * table records already (Spark replays the last batch after a failure) writes and commits
 * nothing, and one that a racing replay committed first is not committed again.
 *
 * @param sqlContext       the context Spark created the sink in
 * @param tablePath        the table's path
 * @param options          the stream's options (`path`, `checkpointLocation` and the write's)
 * @param partitionColumns the stream's `partitionBy` columns (a new table's partitioning)
 * @param outputMode       `Append`, or `Complete` (each batch replaces the table's rows)
 */
final class IndexTablesStreamSink(
    sqlContext: SQLContext,
    tablePath: String,
    options: Map[String, String],
    partitionColumns: Seq[String],
    outputMode: OutputMode) extends Sink {
  import IndexTablesStreamSink._

  private val logger = LoggerFactory.getLogger(classOf[IndexTablesStreamSink])

  private val complete = outputMode == OutputMode.Complete()
  private val modeName = if (complete) "Complete" else "Append"

  // The output mode, the options and an append's partitioning, checked when the stream starts,
  // as a batch write checks them before its first task.
  private val checked = new IndexTables4SparkTable(tablePath, new StructType(), Nil, options)
  checked.checkStreamingSink(outputMode)
  if (!complete)
    checked.existingSnapshot.foreach(snap =>
      IndexTables4SparkWriteBuilder.checkPartitioning(
        checked.name(),
        snap.metadata.partitionColumns,
        partitionColumns))

  override def addBatch(batchId: Long, data: DataFrame): Unit = {
    val spark = sqlContext.sparkSession
    val queryId = spark.sparkContext.getLocalProperty(QueryIdProperty)
    if (queryId == null)
      throw IndexTablesErrors.internalError(
        s"batch $batchId reached the sink of $tablePath outside a streaming query")
    val latest = TableLogResolver.load(tablePath, options)
    if (StreamingTxn.recordedEpoch(latest, queryId).exists(_ >= batchId)) {
      logger.info(s"Batch $batchId of streaming query $queryId is in $tablePath already; " +
        "its replay writes nothing")
      return
    }
    // The batch's own execution runs when the write's tasks run.
    val rows = SparkLineShim.batchOf(data)
    val stream = StreamingBatch(StreamingTxn(queryId, batchId), modeName)
    val target = new IndexTables4SparkTable(
      tablePath,
      data.schema,
      partitionColumns,
      options,
      acceptsWrites = true,
      knownSnapshot = Some(latest),
      streamingBatch = Some(stream))
    SparkWriteBridge.write(spark, target, rows, overwrite = complete, options)
  }

  override def toString: String = s"IndexTablesStreamSink($tablePath)"
}

object IndexTablesStreamSink {

  /** The local property Spark sets to a streaming query's id while it runs a batch. */
  val QueryIdProperty = "sql.streaming.queryId"
}
