package io.indextables.spark.write

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.StructType

import io.indextables.spark.schema.TableIndexSchema
import io.indextables.spark.util.SerializableHadoopConf

/**
 * Everything a write's tasks need, decided on the driver before any file is written and shipped
 * to executors. Immutable.
 *
 * @param rowCheck a predicate every written row must satisfy (replaceWhere), if any
 * @param schemaChange the columns this write adds to the table (mergeSchema), if any
 * @param optimized    how an optimized write asked Spark to shuffle its rows, if it is one
 * @param companion    how a table of the companion layout stores the rows (None: in the splits)
 * @param tableProperties the properties a CREATE or REPLACE TABLE gives the table: recorded in
 *                     its metadata by a write that creates or replaces it (the indexing keys
 *                     among them as the resolved index schema records them)
 */
final case class WritePlan(
    tablePath: String,
    hadoopConf: SerializableHadoopConf,
    writeSchema: StructType,
    indexSchema: TableIndexSchema,
    path: WritePath,
    timeZone: String,
    heapSize: Long,
    batchRows: Int,
    maxRowsPerSplit: Long,
    statsTruncateAt: Int,
    rowCheck: Option[RowCheck] = None,
    schemaChange: Option[SchemaChange] = None,
    optimized: Option[OptimizedWriteSpec] = None,
    companion: Option[CompanionWrite] = None,
    tableProperties: Map[String, String] = Map.empty)

/**
 * What an optimized write asked of Spark, for its commit record.
 *
 * @param distributionMode hash, balanced or none
 * @param estimate         the advisory shuffle size and how it was found
 */
final case class OptimizedWriteSpec(
    distributionMode: String,
    targetSplitSize: Long,
    estimate: SizeEstimate) {
  def parameters: Map[String, String] = Map(
    "optimizeWrite" -> distributionMode,
    "targetSplitSize" -> targetSplitSize.toString,
    "advisoryPartitionSize" -> estimate.advisoryBytes.toString,
    "sizeEstimate" -> estimate.mode
  ) ++ estimate.maxRowsPerSplit.map(n => "maxRowsPerSplit" -> n.toString)
}

/** A table schema `from` that a write extends to `to` by adding columns. */
final case class SchemaChange(from: StructType, to: StructType)

/**
 * A predicate, bound to the write schema, that every written row must satisfy.
 *
 * @param predicate the predicate as the user gave it, for the error
 */
final case class RowCheck(table: String, predicate: String, bound: Expression)
