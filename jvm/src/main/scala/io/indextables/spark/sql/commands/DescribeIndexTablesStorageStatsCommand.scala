package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.indextables.SparkExecutors
import org.apache.spark.sql.types.{IntegerType, LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.read.SplitCaches

/**
 * `DESCRIBE INDEXTABLES STORAGE STATS`: what the driver and each executor have read from
 * storage since they started, one row per JVM: executor_id string, object_storage_requests long
 * and object_storage_bytes long (tantivy4java's ranged reads of splits), memory_cache_bytes long,
 * memory_cache_hits long, memory_cache_misses long (its in-memory caches), local_copies int and
 * local_copy_bytes long (splits copied whole from Azure or HDFS).
 */
case object DescribeIndexTablesStorageStatsCommand extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("executor_id", StringType, nullable = false)(),
    AttributeReference("object_storage_requests", LongType, nullable = false)(),
    AttributeReference("object_storage_bytes", LongType, nullable = false)(),
    AttributeReference("memory_cache_bytes", LongType, nullable = false)(),
    AttributeReference("memory_cache_hits", LongType, nullable = false)(),
    AttributeReference("memory_cache_misses", LongType, nullable = false)(),
    AttributeReference("local_copies", IntegerType, nullable = false)(),
    AttributeReference("local_copy_bytes", LongType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] =
    SparkExecutors.onEveryJvm(spark.sparkContext)(() => SplitCaches.storageStats()).map {
      case (id, s) =>
        Row(
          id,
          s.objectStorageRequests,
          s.objectStorageBytes,
          s.memoryCacheBytes,
          s.memoryCacheHits,
          s.memoryCacheMisses,
          s.localCopies,
          s.localCopyBytes)
    }
}
