package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.transaction.{CheckpointWriter, LogRetention}

/**
 * `TRUNCATE INDEXTABLES TIME TRAVEL '<path>' | <table> [DRY RUN]`: drops the table's history, as
 * upstream's command does. It checkpoints the latest version (unless `_last_checkpoint` already
 * names it), then deletes every version file, JSON checkpoint and Avro state before that
 * version, whatever their age; the latest version reads as before, and time travel reaches the
 * checkpointed version and later ones only. Split files are not touched: PURGE INDEXTABLE then
 * deletes those no remaining version references. DRY RUN writes and deletes nothing.
 *
 * One row: table_path string, status string (SUCCESS | DRY_RUN), checkpoint_version long,
 * versions_deleted long, checkpoints_deleted long (JSON checkpoint files and state
 * directories), files_preserved long (the live splits), message string.
 */
case class TruncateTimeTravelCommand(target: IndexTablesCommandTarget, dryRun: Boolean)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("table_path", StringType, nullable = false)(),
    AttributeReference("status", StringType, nullable = false)(),
    AttributeReference("checkpoint_version", LongType, nullable = false)(),
    AttributeReference("versions_deleted", LongType, nullable = false)(),
    AttributeReference("checkpoints_deleted", LongType, nullable = false)(),
    AttributeReference("files_preserved", LongType, nullable = false)(),
    AttributeReference("message", StringType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val log = target.log(spark)
    val snapshot = log.snapshot()
    val version = snapshot.version
    if (!dryRun && !log.lastCheckpointVersion.contains(version)) {
      CheckpointWriter.checkpoint(log, snapshot)
    }
    val plan = LogRetention.truncatePlan(log, version)
    if (!dryRun) LogRetention.apply(log, plan)
    val versions = plan.versionFiles.size.toLong
    val checkpoints = (plan.stateDirs.size + plan.checkpointFiles.size).toLong
    val verb = if (dryRun) "Would delete" else "Deleted"
    Seq(Row(
      log.tablePath.toString,
      if (dryRun) "DRY_RUN" else "SUCCESS",
      version,
      versions,
      checkpoints,
      snapshot.numFiles.toLong,
      s"$verb $versions version files and $checkpoints checkpoint files or states before " +
        s"version $version; time travel reaches version $version and later"
    ))
  }
}
