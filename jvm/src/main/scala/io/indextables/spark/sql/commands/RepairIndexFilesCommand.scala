package io.indextables.spark.sql.commands

import scala.util.Try

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{IntegerType, LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.core.TableLogResolver
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction.{LogRepair, TablePaths, TransactionLog}

/**
 * `REPAIR INDEXFILES TRANSACTION LOG '<source>' AT LOCATION '<target>'`: writes, at `target`, a
 * clean log of the source table's latest version that keeps only the splits whose files exist
 * below the table root (a split that is missing, or whose path leaves the table, is dropped).
 * `source` is the table's `_transaction_log` directory (as upstream) or the table root;
 * `target` is a log directory that must not hold files yet. Version 0 of the new log holds the
 * protocol and metadata, version 1 the kept splits, with their paths relative to the table root
 * as before: to use it, move it in place of the table's `_transaction_log`. The source is only
 * read.
 *
 * One row: source_path, target_path, source_version long, total_splits int, valid_splits int,
 * missing_splits int, status string (SUCCESS), as upstream's.
 */
case class RepairIndexFilesCommand(source: String, target: String) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("source_path", StringType, nullable = false)(),
    AttributeReference("target_path", StringType, nullable = false)(),
    AttributeReference("source_version", LongType, nullable = false)(),
    AttributeReference("total_splits", IntegerType, nullable = false)(),
    AttributeReference("valid_splits", IntegerType, nullable = false)(),
    AttributeReference("missing_splits", IntegerType, nullable = false)(),
    AttributeReference("status", StringType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    def invalid(why: String) = IndexTablesErrors.invalidRepair(source, target, why)
    val trimmed = source.stripSuffix("/")
    val tableRoot =
      if (new Path(trimmed).getName == TransactionLog.LogDirName) new Path(trimmed).getParent
      else new Path(trimmed)
    if (tableRoot == null) throw invalid("the source names no table")
    val opts = TableLogResolver.settings(Map.empty)
    val log = TableLogResolver.log(tableRoot.toString, opts)
    if (!log.exists) throw invalid(s"no table log at ${log.logPath}")
    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)
    val targetDir = LogStore.qualify(new Path(target), hadoopConf)
    if (targetDir == log.logPath) throw invalid("the target is the source log itself")
    val targetStore = LogStore.forPath(targetDir, hadoopConf)
    if (targetStore.listRecursively(targetDir).hasNext) {
      throw invalid("the target location already holds files")
    }
    val snapshot = log.snapshot()
    val store = log.tableStore
    val all = snapshot.allFiles
    val kept = all.filter { a =>
      Try(TablePaths.resolve(log.tablePath, a.path)).toOption.exists(store.exists)
    }
    LogRepair.write(targetStore, targetDir, snapshot, kept, opts.logSettings.compression)
    Seq(Row(
      source,
      target,
      snapshot.version,
      all.size,
      kept.size,
      all.size - kept.size,
      "SUCCESS"))
  }
}
