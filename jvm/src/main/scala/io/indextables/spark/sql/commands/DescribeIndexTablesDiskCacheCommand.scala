package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.indextables.SparkExecutors
import org.apache.spark.sql.types.{BooleanType, DoubleType, IntegerType, LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.read.SplitCaches

/**
 * `DESCRIBE INDEXTABLES DISK CACHE`: the L2 disk cache of the driver and of every executor, one
 * row per cache (a JVM without one gives one row with enabled = false): executor_id string,
 * enabled boolean, path string, total_bytes long, max_bytes long (0: two thirds of the disk),
 * usage_percent double, splits_cached int, components_cached int.
 */
case object DescribeIndexTablesDiskCacheCommand extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("executor_id", StringType, nullable = false)(),
    AttributeReference("enabled", BooleanType, nullable = false)(),
    AttributeReference("path", StringType)(),
    AttributeReference("total_bytes", LongType, nullable = false)(),
    AttributeReference("max_bytes", LongType, nullable = false)(),
    AttributeReference("usage_percent", DoubleType, nullable = false)(),
    AttributeReference("splits_cached", IntegerType, nullable = false)(),
    AttributeReference("components_cached", IntegerType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] =
    SparkExecutors.onEveryJvm(spark.sparkContext)(() => SplitCaches.diskReports()).flatMap {
      case (id, reports) =>
        reports.map { r =>
          val usage = if (r.maxBytes > 0) r.totalBytes * 100.0 / r.maxBytes else 0.0
          Row(id, r.enabled, r.path.orNull, r.totalBytes, r.maxBytes, usage, r.splits, r.components)
        }
    }
}
