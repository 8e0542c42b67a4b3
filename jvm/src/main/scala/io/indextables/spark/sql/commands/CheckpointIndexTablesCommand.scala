package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.transaction.{CheckpointWriter, TransactionLog}

/**
 * `CHECKPOINT INDEXTABLES '<path>' | <table>` (or upstream's `COMPACT INDEXTABLES ...`): writes
 * a compacted checkpoint of the table's log at its latest version. Returns one row: table_path string, version long (the checkpointed version).
 */
case class CheckpointIndexTablesCommand(target: IndexTablesCommandTarget)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("table_path", StringType, nullable = false)(),
    AttributeReference("version", LongType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = {
    val log = target.log(spark)
    val version = CheckpointIndexTablesCommand.writeCheckpoint(log)
    Seq(Row(log.tablePath.toString, version))
  }
}

object CheckpointIndexTablesCommand {

  /**
   * Writes a checkpoint of `log` at its latest version, in the format the session's
   * `spark.indextables.state.format` names (Avro state by default), and returns that version.
   * An Avro state is compacted: written whole, with no tombstones and no manifests of earlier
   * states, as upstream's CHECKPOINT does.
   */
  def writeCheckpoint(log: TransactionLog): Long = {
    val snapshot = log.snapshot()
    CheckpointWriter.checkpoint(log, snapshot, forceCompaction = true)
    snapshot.version
  }
}
