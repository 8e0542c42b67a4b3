package io.indextables.spark.write

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}

/** Serializable factory of write tasks; built on the driver from the write's plan. */
final class IndexTables4SparkDataWriterFactory(plan: WritePlan) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new IndexTables4SparkDataWriter(plan, partitionId, taskId)
}
