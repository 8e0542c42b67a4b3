package io.indextables.spark.write

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import org.slf4j.LoggerFactory

import io.indextables.spark.transaction.StreamingTxn

/**
 * The driver's side of one micro-batch of a streaming query into the table (Spark plans the
 * write anew for every batch). The batch is a batch write ([[IndexTables4SparkBatchWrite]],
 * planned on the table's newest snapshot): the same tasks, and one log version per batch
 * through the same commit, merge on write and purge on write, which also records the query's
 * id and the batch's epoch ([[StreamingTxn]]). Exactly once: a batch the table records already
 * (Spark replays the last batch after a failure) commits nothing, and its tasks write nothing
 * when the table recorded it before the batch was planned.
 *
 * @param outputMode    `Append`, or `Complete` (the batch replaces the table's rows)
 * @param recordedEpoch the query's latest epoch in the table when the batch was planned
 */
final class IndexTables4SparkStreamingWrite(
    tableName: String,
    queryId: String,
    outputMode: String,
    batch: IndexTables4SparkBatchWrite,
    recordedEpoch: Option[Long]) extends StreamingWrite {

  private val logger = LoggerFactory.getLogger(classOf[IndexTables4SparkStreamingWrite])

  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    new IndexTables4SparkStreamingWriterFactory(batch.createBatchWriterFactory(info), recordedEpoch)

  override def useCommitCoordinator(): Boolean = batch.useCommitCoordinator()

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit = {
    val stream = StreamingBatch(StreamingTxn(queryId, epochId), outputMode)
    batch.commitVersion(messages, Some(stream)) match {
      case Some(version) =>
        logger.info(s"Committed batch $epochId of streaming query $queryId to $tableName " +
          s"as version $version")
      case None =>
        logger.info(s"Batch $epochId of streaming query $queryId is in $tableName already; " +
          "its replay committed nothing")
    }
  }

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    batch.abort(messages)
}

/**
 * The batch write's task factory, for a stream's tasks: a task of an epoch the table recorded
 * before the batch was planned writes nothing (its rows are in the table already). Serializable;
 * runs on executors.
 */
final class IndexTables4SparkStreamingWriterFactory(
    tasks: DataWriterFactory,
    recordedEpoch: Option[Long]) extends StreamingDataWriterFactory {

  override def createWriter(partitionId: Int, taskId: Long, epochId: Long)
      : DataWriter[InternalRow] =
    if (recordedEpoch.exists(_ >= epochId)) new DiscardingDataWriter
    else tasks.createWriter(partitionId, taskId)
}

/** A task's writer that drops its rows: the rows of a batch the table holds already. */
private final class DiscardingDataWriter extends DataWriter[InternalRow] {
  override def write(record: InternalRow): Unit = ()
  override def commit(): WriterCommitMessage = IndexTablesCommitMessage(Nil, 0L, 0L)
  override def abort(): Unit = ()
  override def close(): Unit = ()
}

/**
 * A streaming batch as a commit records it: its [[StreamingTxn]] in the version's metadata, and
 * the output mode, query id and epoch in the commit record's parameters, as Delta's
 * `STREAMING UPDATE` commits name them.
 */
final case class StreamingBatch(txn: StreamingTxn, outputMode: String) {
  def parameters: Map[String, String] = Map(
    "outputMode" -> outputMode,
    "queryId" -> txn.queryId,
    "epochId" -> txn.epochId.toString)
}

object StreamingBatch {

  /** The operation of a streaming batch's commit record. */
  val Operation = "STREAMING UPDATE"
}
