package io.indextables.spark.write

import java.io.File
import java.nio.file.{AtomicMoveNotSupportedException, Files, Paths, StandardCopyOption}
import java.util.UUID

import org.apache.hadoop.fs.{LocalFileSystem, Path, RawLocalFileSystem}

import io.indextables.spark.schema.PartitionValues

/**
 * Moves finished local splits into the table directory, under their Hive-style partition
 * directory, with a fresh name. Runs on executors.
 */
final class SplitUploader(plan: WritePlan) {
  private val tableRoot = new Path(plan.tablePath)
  private val fs = tableRoot.getFileSystem(plan.hadoopConf.value)

  /** Returns (path relative to the table, size in bytes). */
  def upload(split: LocalSplit): (String, Long) = {
    val dir = PartitionValues.directory(plan.indexSchema.partitionColumns, split.partitionValues)
    val name = s"part-${UUID.randomUUID()}.split"
    val relative = if (dir.isEmpty) name else s"$dir/$name"
    val target = new Path(tableRoot, relative)
    val local = new File(split.localPath)
    val size = local.length()
    val isLocal = fs.isInstanceOf[LocalFileSystem] || fs.isInstanceOf[RawLocalFileSystem]
    if (isLocal) {
      val dest = Paths.get(fs.makeQualified(target).toUri)
      Files.createDirectories(dest.getParent)
      try Files.move(local.toPath, dest, StandardCopyOption.ATOMIC_MOVE)
      catch { case _: AtomicMoveNotSupportedException => Files.move(local.toPath, dest) }
    } else {
      fs.copyFromLocalFile(true, false, new Path(local.getAbsolutePath), target)
    }
    (relative, size)
  }

  def delete(relative: String): Unit = {
    try fs.delete(new Path(tableRoot, relative), false)
    catch { case _: Exception => }
  }
}
