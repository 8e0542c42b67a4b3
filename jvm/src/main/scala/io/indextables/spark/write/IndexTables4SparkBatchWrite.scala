package io.indextables.spark.write

import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}

import io.indextables.spark.transaction.TransactionLog

/**
 * The driver's side of one write: hands the plan to tasks, then commits every task's splits as
 * one new log version (removing all live files first when overwriting). On abort it deletes the
 * splits that tasks reported, and nothing else.
 *
 * @param log the table's transaction log, with the write's settings (driver side)
 */
final class IndexTables4SparkBatchWrite(
    plan: WritePlan,
    overwrite: Boolean,
    log: TransactionLog) extends BatchWrite {

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new IndexTables4SparkDataWriterFactory(plan)

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    val adds = messages.toSeq.flatMap {
      case IndexTablesCommitMessage(a) => a
      case _ => Nil
    }
    val operation = if (overwrite) "OVERWRITE" else "WRITE"
    try {
      log.startTransaction().commit(operation) { current =>
        CommitActions.build(current, plan, adds, overwrite)
      }
    } catch {
      case e: Throwable =>
        abort(messages)
        throw e
    }
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = {
    val uploader = new SplitUploader(plan)
    messages.foreach {
      case IndexTablesCommitMessage(a) => a.foreach(add => uploader.delete(add.path))
      case _ =>
    }
  }
}
