package io.indextables.spark.sql.commands

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.connector.write.LogicalWriteInfo
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.sql.types._
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.ConfEntry
import io.indextables.spark.core.{IndexTables4SparkTable, TableLogResolver}
import io.indextables.spark.filters.PartitionPredicate
import io.indextables.spark.merge._
import io.indextables.spark.schema.TableIndexing
import io.indextables.spark.transaction.TransactionLog
import io.indextables.spark.write.{IndexTables4SparkBatchWrite, SplitRewrite, SplitUploader}

/**
 * `MERGE SPLITS '<path>' | <table> [WHERE <partition predicate>] [TARGET SIZE s]
 * [MAX DEST SPLITS n] [MAX SOURCE SPLITS PER MERGE n]`: merges the table's small splits, per
 * partition, into splits near the target size (default 5G; splits of 45% of it or more stay),
 * on the executors, and commits the result as one `dataChange=false` version (see
 * [[MergeExecutor]]). Splits with deleted rows are first written again without them (one
 * version of their own), so that no merged split holds a deleted row. Sizes are bytes or a number with K, M, G or T; the clauses' values may be
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
    val (rewritten, rewriteVersion) = rewriteDeletedRows(log, path, request, settings, include)
    val r = MergeExecutor.run(spark, log, hadoopConf, request, settings, include)
    val message =
      if (rewritten == 0) r.message
      else s"rewrote $rewritten splits without their deleted rows; ${r.message}"
    Seq(Row(
      log.tablePath.toString,
      Row(
        if (rewritten > 0 && r.mergeGroups == 0) "success" else r.status,
        r.mergedFiles,
        r.mergeGroups,
        r.originalSizeBytes,
        r.mergedSizeBytes,
        message,
        r.failedGroups,
        r.conflictGroups
      ),
      if (settings.tempDirectory.isEmpty) null else settings.tempDirectory,
      settings.heapSize,
      r.version.orElse(rewriteVersion).map(Long.box).orNull
    ))
  }

  /**
   * First of all, the splits with deleted rows that the merge must not carry over
   * ([[MergePlanner.vectorRewrites]]: the native merge would keep their deleted rows) are written
   * again without them, by the table's own writer, and committed as one `dataChange=false`
   * version that replaces them; the merge then takes the new splits like any. A split that
   * another commit changed since it was read fails the command, and the new splits are deleted.
   * Returns how many splits were rewritten, and the version.
   */
  private def rewriteDeletedRows(
      log: TransactionLog,
      path: String,
      request: MergeRequest,
      settings: MergeSettings,
      include: Map[String, String] => Boolean): (Int, Option[Long]) = {
    val snapshot = log.snapshot()
    val splits = MergePlanner.vectorRewrites(
      snapshot,
      request,
      include,
      settings.deletedRowsThreshold,
      System.currentTimeMillis())
    if (splits.isEmpty) return (0, None)
    val columns = TableIndexing.tableSchema(snapshot)
    val table = new IndexTables4SparkTable(
      path,
      columns,
      snapshot.metadata.partitionColumns,
      Map("path" -> path),
      acceptsWrites = true,
      knownSnapshot = Some(Some(snapshot)))
    val info = new LogicalWriteInfo {
      override def options(): CaseInsensitiveStringMap = CaseInsensitiveStringMap.empty()
      override def queryId(): String = java.util.UUID.randomUUID().toString
      override def schema(): StructType = columns
    }
    val plan = table.newWriteBuilder(info).build().toBatch match {
      case b: IndexTables4SparkBatchWrite => b.plan
      case other => throw IndexTablesErrors.internalError(s"a rewrite planned as $other")
    }
    val adds = SplitRewrite.rewrite(plan, snapshot, splits, Map.empty, None)
    try {
      val version = log.startTransaction().commit(
        "MERGE SPLITS",
        Map("deletedRowsRewrite" -> splits.size.toString)) { current =>
        val live = current.toSeq.flatMap(_.allFiles).map(_.fileKey).toSet
        splits.find(s => !live.contains(s.fileKey)).foreach { s =>
          throw IndexTablesErrors.rowLevelConflict(path, "MERGE SPLITS", s.path, "changed")
        }
        val now = System.currentTimeMillis()
        splits.map(_.removed(now, dataChange = false)) ++ adds.map(_.copy(dataChange = false))
      }
      (splits.size, Some(version))
    } catch {
      case e: Throwable =>
        val uploader = new SplitUploader(plan)
        adds.foreach(uploader.deleteFiles)
        throw e
    }
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
