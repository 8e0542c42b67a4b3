package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{LongType, StringType, TimestampType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.transaction.{AddAction, RemoveAction}

/**
 * `DESCRIBE INDEXTABLES HISTORY '<path>' | <table>`: one row per version file in the log, newest
 * first: version long, timestamp timestamp (the version file's modification time), operation
 * string, files_added long, files_removed long. The log records no operation name, so it is
 * derived from the actions: CREATE (version 0), WRITE (adds only), OVERWRITE (removes and
 * adds), REMOVE (removes only), METADATA (neither).
 */
case class DescribeIndexTablesHistoryCommand(target: IndexTablesCommandTarget)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("version", LongType, nullable = false)(),
    AttributeReference("timestamp", TimestampType)(),
    AttributeReference("operation", StringType, nullable = false)(),
    AttributeReference("files_added", LongType, nullable = false)(),
    AttributeReference("files_removed", LongType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val log = target.log(spark)
    log.listVersions().reverse.map { v =>
      val actions = log.actionsOf(v)
      val added = actions.count(_.isInstanceOf[AddAction]).toLong
      val removed = actions.count(_.isInstanceOf[RemoveAction]).toLong
      val operation =
        if (v == 0) "CREATE"
        else if (added > 0 && removed > 0) "OVERWRITE"
        else if (added > 0) "WRITE"
        else if (removed > 0) "REMOVE"
        else "METADATA"
      Row(v, new java.sql.Timestamp(log.commitTimestamp(v)), operation, added, removed)
    }
  }
}
