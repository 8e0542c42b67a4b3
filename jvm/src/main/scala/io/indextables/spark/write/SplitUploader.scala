package io.indextables.spark.write

import java.io.File
import java.util.UUID

import org.apache.hadoop.fs.Path

import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction.TablePaths

/**
 * Publishes finished local splits in the table directory, under their Hive-style partition
 * directory, with a fresh name, through the table's [[LogStore]] (a move on local disk, a
 * multipart or staged-block upload on an object store). Runs on executors.
 */
final class SplitUploader(plan: WritePlan) {
  private val tableRoot = new Path(plan.tablePath)
  private val store = LogStore.forPath(tableRoot, plan.hadoopConf.value)

  /** Returns (path relative to the table, size in bytes). */
  def upload(split: LocalSplit): (String, Long) = {
    val dir = PartitionValues.directory(plan.indexSchema.partitionColumns, split.partitionValues)
    val name = s"part-${UUID.randomUUID()}.split"
    val relative = if (dir.isEmpty) name else s"$dir/$name"
    val local = new File(split.localPath)
    val size = local.length()
    store.upload(local, new Path(tableRoot, relative))
    (relative, size)
  }

  def delete(relative: String): Unit = {
    try store.delete(TablePaths.resolve(tableRoot, relative))
    catch { case _: Exception => }
  }
}
