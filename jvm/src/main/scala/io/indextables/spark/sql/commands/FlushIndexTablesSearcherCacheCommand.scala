package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.indextables.SparkExecutors
import org.apache.spark.sql.types.{IntegerType, LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.read.SplitCaches

/**
 * `FLUSH INDEXTABLES SEARCHER CACHE`: in the driver and on every executor, closes the pooled
 * split searchers and empties tantivy4java's in-memory caches (split footers, index pages, the
 * leaf-search cache). One row per JVM: executor_id string ("driver" for the driver),
 * searchers_closed int, cache_managers int, bytes_freed long.
 */
case object FlushIndexTablesSearcherCacheCommand extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("executor_id", StringType, nullable = false)(),
    AttributeReference("searchers_closed", IntegerType, nullable = false)(),
    AttributeReference("cache_managers", IntegerType, nullable = false)(),
    AttributeReference("bytes_freed", LongType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] =
    SparkExecutors.onEveryJvm(spark.sparkContext)(() => SplitCaches.flushSearchers()).map {
      case (id, f) => Row(id, f.searchersClosed, f.cacheManagers, f.bytesFreed)
    }
}
