package io.indextables.spark.sql.commands

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.ConfEntry
import io.indextables.spark.core.TableLogResolver
import io.indextables.spark.filters.PartitionPredicate
import io.indextables.spark.merge._

/**
 * `MERGE SPLITS '<path>' | <table> [WHERE <partition predicate>] [TARGET SIZE s]
 * [MAX DEST SPLITS n] [MAX SOURCE SPLITS PER MERGE n]`: merges the table's small splits, per
 * partition, into splits near the target size (default 5G; splits of 45% of it or more stay),
 * on the executors, and commits the result as one `dataChange=false` version (see
 * [[MergeExecutor]]). Sizes are bytes or a number with K, M, G or T; the clauses' values may be
 * quoted. Returns one row, as upstream: table_path string, metrics struct (status,
 * merged_files, merge_groups, original_size_bytes, merged_size_bytes, message, failed_groups,
 * conflict_groups), temp_directory_path string, heap_size_bytes long, and version long (the
 * version committed, null if none).
 */
case class MergeSplitsCommand(
    target: IndexTablesCommandTarget,
    where: Option[String],
    targetSize: Option[String],
    maxDestSplits: Option[String],
    maxSourceSplitsPerMerge: Option[String])
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("table_path", StringType, nullable = false)(),
    AttributeReference("metrics", MergeSplitsCommand.MetricsType, nullable = false)(),
    AttributeReference("temp_directory_path", StringType)(),
    AttributeReference("heap_size_bytes", LongType)(),
    AttributeReference("version", LongType)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    // Options are checked before anything is read, so a bad value never waits for a plan.
    val size = targetSize.map(MergeSplitsCommand.size).getOrElse(MergeRequest.DefaultTargetSize)
    val maxDest = maxDestSplits.map(MergeSplitsCommand.count("MAX DEST SPLITS", _, 1))
    val maxSource = maxSourceSplitsPerMerge.map(
      MergeSplitsCommand.count("MAX SOURCE SPLITS PER MERGE", _, 2))
    val path = target.resolvePath(spark)
    val opts = TableLogResolver.settings(Map.empty)
    val log = TableLogResolver.log(path, opts)
    if (!log.exists) throw IndexTablesErrors.tableNotFound(path)
    val settings = MergeSettings(opts)
    val snapshot = log.snapshot()
    val include = where.map { predicate =>
      val errors = PartitionPredicate.Errors(
        why => IndexTablesErrors.invalidMergeWhere(path, predicate, why),
        columns =>
          IndexTablesErrors.mergeWhereNotOnPartitions(
            path,
            predicate,
            columns.head,
            snapshot.metadata.partitionColumns)
      )
      PartitionPredicate.parse(
        spark,
        predicate,
        DataType.fromJson(snapshot.metadata.schemaString).asInstanceOf[StructType],
        snapshot.metadata.partitionColumns,
        spark.sessionState.conf.sessionLocalTimeZone,
        errors
      ).matches _
    }.getOrElse((_: Map[String, String]) => true)
    val request =
      MergeRequest(size, maxDest, maxSource.getOrElse(settings.maxSourceSplitsPerMerge))
    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)
    val r = MergeExecutor.run(spark, log, hadoopConf, request, settings, include)
    Seq(Row(
      log.tablePath.toString,
      Row(
        r.status,
        r.mergedFiles,
        r.mergeGroups,
        r.originalSizeBytes,
        r.mergedSizeBytes,
        r.message,
        r.failedGroups,
        r.conflictGroups),
      if (settings.tempDirectory.isEmpty) null else settings.tempDirectory,
      settings.heapSize,
      r.version.map(Long.box).orNull
    ))
  }
}

object MergeSplitsCommand {

  val MetricsType: StructType = StructType(Seq(
    StructField("status", StringType, nullable = false),
    StructField("merged_files", LongType),
    StructField("merge_groups", LongType),
    StructField("original_size_bytes", LongType),
    StructField("merged_size_bytes", LongType),
    StructField("message", StringType),
    StructField("failed_groups", LongType),
    StructField("conflict_groups", LongType)
  ))

  /** The least TARGET SIZE upstream accepts. */
  val MinTargetSize: Long = 1L << 20

  private def size(value: String): Long =
    ConfEntry.parseBytes(value).filter(_ >= MinTargetSize).getOrElse(
      throw IndexTablesErrors.invalidMergeOption(
        "TARGET SIZE",
        value,
        "a size of at least 1M: bytes, or a number with K, M, G or T (100M, 5G)"))

  private def count(clause: String, value: String, min: Int): Int =
    Try(value.trim.toInt).toOption.filter(_ >= min).getOrElse(
      throw IndexTablesErrors.invalidMergeOption(clause, value, s"an integer of at least $min"))
}
