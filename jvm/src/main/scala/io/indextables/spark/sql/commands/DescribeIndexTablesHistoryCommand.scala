package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{LongType, MapType, StringType, TimestampType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.transaction.{AddAction, RemoveAction}

/**
 * `DESCRIBE INDEXTABLES HISTORY '<path>' | <table>`: one row per version file in the log, newest
 * first: version long, timestamp timestamp (the version file's modification time), operation
 * string, operation_parameters map<string,string>, files_added long, files_removed long,
 * operation_metrics map<string,string> (rows, bytes and files written, shuffle bytes read). The
 * operation and its parameters (mode, predicate, partitionOverwriteMode) are the ones the writer
 * recorded beside the version (see io.indextables.spark.transaction.CommitInfo); for a version
 * without that record (another writer's, or one whose writer died before recording it) the
 * operation is derived from the actions: CREATE (version 0), WRITE (adds only), OVERWRITE
 * (removes and adds), REMOVE (removes only), METADATA (neither), and the parameters and metrics
 * are empty.
 */
case class DescribeIndexTablesHistoryCommand(target: IndexTablesCommandTarget)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("version", LongType, nullable = false)(),
    AttributeReference("timestamp", TimestampType)(),
    AttributeReference("operation", StringType, nullable = false)(),
    AttributeReference("operation_parameters", MapType(StringType, StringType))(),
    AttributeReference("files_added", LongType, nullable = false)(),
    AttributeReference("files_removed", LongType, nullable = false)(),
    AttributeReference("operation_metrics", MapType(StringType, StringType))()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val log = target.log(spark)
    log.listVersions().reverse.map { v =>
      val actions = log.actionsOf(v)
      val added = actions.count(_.isInstanceOf[AddAction]).toLong
      val removed = actions.count(_.isInstanceOf[RemoveAction]).toLong
      val derived =
        if (v == 0) "CREATE"
        else if (added > 0 && removed > 0) "OVERWRITE"
        else if (added > 0) "WRITE"
        else if (removed > 0) "REMOVE"
        else "METADATA"
      val info = log.commitInfo(v)
      Row(
        v,
        new java.sql.Timestamp(log.commitTimestamp(v)),
        info.map(_.operation).getOrElse(derived),
        info.map(_.parameters).getOrElse(Map.empty[String, String]),
        added,
        removed,
        info.map(_.metrics).getOrElse(Map.empty[String, String])
      )
    }
  }
}
