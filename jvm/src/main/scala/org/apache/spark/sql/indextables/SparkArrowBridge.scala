package org.apache.spark.sql.indextables

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.arrow.vector.types.pojo.Schema
import org.apache.spark.sql.execution.arrow.ArrowWriter
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.ArrowUtils

/**
 * Reaches the few Spark-internal Arrow helpers (`private[sql]`) that the write path needs, so the
 * rest of the plugin uses Spark's own, well-tested InternalRow-to-Arrow conversion instead of a
 * copy of it. Thread-safe: every member is stateless or Spark's process-wide allocator.
 */
object SparkArrowBridge {

  /** A child of Spark's root Arrow allocator; the caller closes it. */
  def newAllocator(name: String): BufferAllocator =
    ArrowUtils.rootAllocator.newChildAllocator(name, 0, Long.MaxValue)

  /** Spark's own mapping of a Catalyst schema to Arrow (timestamps in UTC). */
  def toArrowSchema(schema: StructType): Schema =
    ArrowUtils.toArrowSchema(
      schema,
      "UTC",
      errorOnDuplicatedFieldNames = true,
      largeVarTypes = false)

  /** Spark's writer of InternalRows into the vectors of `root`. */
  def newArrowWriter(root: VectorSchemaRoot): ArrowWriter = ArrowWriter.create(root)

}
