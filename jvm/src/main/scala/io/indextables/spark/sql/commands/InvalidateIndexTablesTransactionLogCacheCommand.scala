package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{IntegerType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.transaction.TransactionLog

/**
 * `INVALIDATE INDEXTABLES TRANSACTION LOG CACHE [FOR '<path>' | <table>]`: drops the driver's
 * cached log state of one table, or of every table, so that the next read or command lists the
 * log afresh (after the log was changed by hand, or by a writer this driver cannot see). One row:
 * table_path string ("all" without FOR), entries_invalidated int.
 */
case class InvalidateIndexTablesTransactionLogCacheCommand(target: Option[IndexTablesCommandTarget])
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("table_path", StringType, nullable = false)(),
    AttributeReference("entries_invalidated", IntegerType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = target match {
    case Some(t) =>
      val path = t.resolvePath(spark)
      val n = TransactionLog.invalidate(path, spark.sessionState.newHadoopConf())
      Seq(Row(path, n))
    case None => Seq(Row("all", TransactionLog.invalidateAll()))
  }
}
