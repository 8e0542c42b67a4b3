package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.core.TableLogResolver
import io.indextables.spark.purge.{PurgeSettings, SplitPurge}

/**
 * `PURGE INDEXTABLE '<path>' | <table> [OLDER THAN n DAYS|HOURS]
 * [TRANSACTION LOG RETENTION n DAYS|HOURS] [DRY RUN]` (INDEXTABLES and TANTIVY4SPARK are
 * accepted for INDEXTABLE): deletes the split files no version of the table can reach that are
 * older than the retention (`purge.defaultRetentionHours`, 168, without OLDER THAN; at least
 * `purge.minRetentionHours`, 24, unless `purge.retentionCheckEnabled` is false), and the log
 * files a checkpoint made unnecessary (see [[io.indextables.spark.purge.SplitPurge]]). DRY RUN
 * deletes nothing and reports what would go.
 *
 * One row: table_path string; metrics struct (status SUCCESS | DRY_RUN | PARTIAL_SUCCESS,
 * orphaned_files_found, orphaned_files_deleted (would be, for a dry run), size_mb_deleted,
 * retention_hours, tx_log_files_deleted, expired_states_found, expired_states_deleted, dry_run,
 * duration_ms, message), as upstream's; files array<struct<path string, size long,
 * modification_time timestamp>>, the split files deleted (or that would be).
 */
case class PurgeIndexTableCommand(
    target: IndexTablesCommandTarget,
    olderThanHours: Option[Long],
    txLogRetentionHours: Option[Long],
    dryRun: Boolean)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("table_path", StringType, nullable = false)(),
    AttributeReference("metrics", PurgeIndexTableCommand.MetricsType, nullable = false)(),
    AttributeReference("files", ArrayType(PurgeIndexTableCommand.FileType), nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val start = System.currentTimeMillis()
    val opts = TableLogResolver.settings(Map.empty)
    val settings = PurgeSettings.forCommand(opts, olderThanHours, txLogRetentionHours, dryRun)
    val log = target.log(spark)
    val r = SplitPurge.run(log, settings)
    val deleted = r.purged.size.toLong - r.failed
    val states = r.log.stateDirs.size.toLong
    val verb = if (dryRun) "would delete" else "deleted"
    val message = s"${r.orphansFound} unreferenced split files, ${r.purged.size} older than " +
      s"${settings.splitRetentionHours} hours: $verb ${r.purged.size - r.failed} " +
      s"(${r.bytes} bytes); $verb ${r.log.versionFiles.size} version files and $states states" +
      (if (r.failed > 0) s"; ${r.failed} deletions failed, run PURGE again" else "")
    val metrics = Row(
      r.status,
      r.orphansFound,
      if (dryRun) r.purged.size.toLong else deleted,
      r.bytes / (1024.0 * 1024.0),
      settings.splitRetentionHours,
      r.log.versionFiles.size.toLong,
      states,
      if (dryRun) 0L else states,
      dryRun,
      System.currentTimeMillis() - start,
      message
    )
    val files = r.purged.map(f => Row(f.path, f.size, new java.sql.Timestamp(f.modificationTime)))
    Seq(Row(log.tablePath.toString, metrics, files))
  }
}

object PurgeIndexTableCommand {
  val MetricsType: StructType = StructType(Seq(
    StructField("status", StringType, nullable = false),
    StructField("orphaned_files_found", LongType),
    StructField("orphaned_files_deleted", LongType),
    StructField("size_mb_deleted", DoubleType),
    StructField("retention_hours", LongType),
    StructField("tx_log_files_deleted", LongType),
    StructField("expired_states_found", LongType),
    StructField("expired_states_deleted", LongType),
    StructField("dry_run", BooleanType, nullable = false),
    StructField("duration_ms", LongType),
    StructField("message", StringType)
  ))

  val FileType: StructType = StructType(Seq(
    StructField("path", StringType, nullable = false),
    StructField("size", LongType, nullable = false),
    StructField("modification_time", TimestampType)
  ))
}
