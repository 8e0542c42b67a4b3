package io.indextables.spark.write

import java.io.File
import java.util.UUID

import org.apache.hadoop.fs.Path

import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction.{AddAction, TablePaths}

/**
 * Publishes finished local splits in the table directory, under their Hive-style partition
 * directory, with a fresh name, through the table's [[LogStore]] (a move on local disk, a
 * multipart or staged-block upload on an object store). Runs on executors.
 */
final class SplitUploader(plan: WritePlan) {
  private val tableRoot = new Path(plan.tablePath)
  private val store = LogStore.forPath(tableRoot, plan.hadoopConf.value)

  /**
   * Returns (path relative to the table, size in bytes) of the split. A companion split's
   * Parquet file goes first, to the path its manifest names, and the split beside it under the
   * same name: a split is never in the table without its rows.
   */
  def upload(split: LocalSplit): (String, Long) = {
    val relative = split.companion match {
      case Some(c) =>
        store.upload(new File(c.localPath), new Path(tableRoot, c.relativePath))
        c.relativePath.stripSuffix(".parquet") + ".split"
      case None =>
        val dir =
          PartitionValues.directory(plan.indexSchema.partitionColumns, split.partitionValues)
        val name = s"part-${UUID.randomUUID()}.split"
        if (dir.isEmpty) name else s"$dir/$name"
    }
    val local = new File(split.localPath)
    val size = local.length()
    store.upload(local, new Path(tableRoot, relative))
    (relative, size)
  }

  /** Deletes every file of `add`: its split and its Parquet files. */
  def deleteFiles(add: AddAction): Unit = add.files.foreach(delete)

  def delete(relative: String): Unit = {
    try store.delete(TablePaths.resolve(tableRoot, relative))
    catch { case _: Exception => }
  }
}
