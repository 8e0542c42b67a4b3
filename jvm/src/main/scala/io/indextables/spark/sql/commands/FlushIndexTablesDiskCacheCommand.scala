package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.indextables.SparkExecutors
import org.apache.spark.sql.types.{IntegerType, LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.read.SplitCaches

/**
 * `FLUSH INDEXTABLES DISK CACHE`: in the driver and on every executor, empties the L2 disk
 * caches and deletes the local copies of Azure and HDFS splits; the next read fetches them
 * again. Run it when no query is reading: a read at that moment fails and must be run again.
 * One row per JVM: executor_id string, disk_caches_flushed int, disk_cache_bytes_freed long,
 * local_copies_deleted int, local_copy_bytes_freed long.
 */
case object FlushIndexTablesDiskCacheCommand extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("executor_id", StringType, nullable = false)(),
    AttributeReference("disk_caches_flushed", IntegerType, nullable = false)(),
    AttributeReference("disk_cache_bytes_freed", LongType, nullable = false)(),
    AttributeReference("local_copies_deleted", IntegerType, nullable = false)(),
    AttributeReference("local_copy_bytes_freed", LongType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] =
    SparkExecutors.onEveryJvm(spark.sparkContext)(() => SplitCaches.flushDisk()).map {
      case (id, f) =>
        Row(
          id,
          f.diskCaches,
          f.diskCacheBytesFreed,
          f.localCopiesDeleted,
          f.localCopyBytesFreed)
    }
}
