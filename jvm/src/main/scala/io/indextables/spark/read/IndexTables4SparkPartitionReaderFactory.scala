package io.indextables.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

/**
 * Serializable factory of the readers of one [[SplitGroup]]: for each of its splits, documents,
 * or the partial rows of a pushed aggregation.
 */
final class IndexTables4SparkPartitionReaderFactory(plan: ReadPlan) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new SplitGroupReader(partition.asInstanceOf[SplitGroup], readerFor)

  private def readerFor(split: SplitInputPartition): PartitionReader[InternalRow] =
    plan.aggregate match {
      case Some(agg) => new IndexTables4SparkAggregateReader(plan, split, agg)
      case None => new IndexTables4SparkPartitionReader(plan, split)
    }
}
