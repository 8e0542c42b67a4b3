package io.indextables.spark.write

import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}

/**
 * A batch write that commits as one batch of a stream ([[StreamingBatch]]): its version records
 * the batch, and a batch the table records by commit time (a racing replay) commits nothing.
 */
final class StreamingBatchWrite(batch: IndexTables4SparkBatchWrite, stream: StreamingBatch)
    extends BatchWrite {

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    batch.createBatchWriterFactory(info)

  override def useCommitCoordinator(): Boolean = batch.useCommitCoordinator()

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    batch.commitVersion(messages, Some(stream))
    ()
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = batch.abort(messages)
}
