package io.indextables.spark.write

import org.apache.spark.sql.types.StructType

import io.indextables.spark.schema.TableIndexSchema
import io.indextables.spark.util.SerializableHadoopConf

/**
 * Everything a write's tasks need, decided on the driver before any file is written and shipped
 * to executors. Immutable.
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
    statsTruncateAt: Int)
