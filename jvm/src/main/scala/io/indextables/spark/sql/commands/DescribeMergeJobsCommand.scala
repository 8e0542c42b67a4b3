package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.merge.MergeOnWrite

/**
 * `DESCRIBE INDEXTABLES MERGE JOBS`: the merge-on-write jobs of this driver, oldest first, one
 * row each: job_id string, table_path string, status string (PENDING, RUNNING, COMPLETED,
 * FAILED; see [[io.indextables.spark.merge.MergeJob]]),
 * total_groups int, completed_groups int, duration_ms long, error_message string, and beyond
 * upstream's columns trigger_version long (the write's version), commit_version long (the
 * merge's, null until it commits), merged_files long and message string (what it did).
 */
case object DescribeMergeJobsCommand extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("job_id", StringType, nullable = false)(),
    AttributeReference("table_path", StringType, nullable = false)(),
    AttributeReference("status", StringType, nullable = false)(),
    AttributeReference("total_groups", IntegerType, nullable = false)(),
    AttributeReference("completed_groups", IntegerType, nullable = false)(),
    AttributeReference("duration_ms", LongType, nullable = false)(),
    AttributeReference("error_message", StringType)(),
    AttributeReference("trigger_version", LongType, nullable = false)(),
    AttributeReference("commit_version", LongType)(),
    AttributeReference("merged_files", LongType, nullable = false)(),
    AttributeReference("message", StringType)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val now = System.currentTimeMillis()
    MergeOnWrite.jobs.map { j =>
      Row(
        j.jobId,
        j.tablePath,
        j.status,
        j.totalGroups,
        j.result.map(_.mergeGroups.toInt).getOrElse(0),
        j.endTime.getOrElse(now) - j.startTime,
        j.error.orNull,
        j.triggerVersion,
        j.result.flatMap(_.version).map(Long.box).orNull,
        j.result.map(_.mergedFiles).getOrElse(0L),
        j.result.map(_.message).orNull
      )
    }
  }
}
