package io.indextables.spark.write

import java.io.File

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.StructType

import io.indextables.spark.schema.PartitionValueProjection
import io.indextables.spark.schema.TableIndexSchema
import io.indextables.spark.stats.SplitStatistics

/**
 * What a task's split writer needs to know, fixed for the task. Not thread-safe (it holds the
 * task's partition projection).
 *
 * @param workDir local directory of this task's unfinished indexes and splits
 */
final class SplitWriterContext(
    val writeSchema: StructType,
    val indexSchema: TableIndexSchema,
    val timeZone: String,
    val workDir: File,
    val heapSize: Long,
    val batchRows: Int,
    val maxRowsPerSplit: Long,
    statsTruncateAt: Int) {

  private val partitionProjection =
    new PartitionValueProjection(writeSchema, indexSchema.partitionColumns, timeZone)
  private val statsColumns = writeSchema.fields.zipWithIndex.collect {
    case (f, i) if !indexSchema.isPartitionColumn(f.name) => (i, f)
  }.toSeq

  /** The row's partition values, in partition column order (empty for unpartitioned tables). */
  def partitionKey(row: InternalRow): Seq[String] =
    if (partitionProjection.isEmpty) Nil else partitionProjection(row).toSeq

  def newStatistics(): SplitStatistics = SplitStatistics.forSchema(statsColumns, statsTruncateAt)
}
