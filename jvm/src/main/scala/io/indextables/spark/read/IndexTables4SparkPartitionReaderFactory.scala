package io.indextables.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

/** Serializable factory of split readers, one per [[SplitInputPartition]]. */
final class IndexTables4SparkPartitionReaderFactory(plan: ReadPlan) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new IndexTables4SparkPartitionReader(plan, partition.asInstanceOf[SplitInputPartition])
}
