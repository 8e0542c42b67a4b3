package io.indextables.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

import io.indextables.spark.metrics.ScanTaskCounters
import io.indextables.spark.read.aggregate.{IndexTables4SparkAggregateReader, PartialAggregator}

/**
 * Serializable factory of the readers of one [[SplitGroup]]: for each of its splits, documents,
 * or the partial rows of a pushed aggregation (one row of empty partials for a global aggregate
 * over no split). A [[PlannedSplitGroup]] is read with the plan it carries.
 */
final class IndexTables4SparkPartitionReaderFactory(plan: ReadPlan) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    (partition, plan.aggregate) match {
      case (PlannedSplitGroup(group, narrowed), _) =>
        new IndexTables4SparkPartitionReaderFactory(narrowed).createReader(group)
      // Spark sums partial counts: without any partial row, its COUNT would be NULL, not 0.
      case (SplitGroup(Seq(), _), Some(agg)) if agg.groupBy.isEmpty =>
        new PartitionReader[InternalRow] {
          private var left = true
          override def next(): Boolean = { val l = left; left = false; l }
          override def get(): InternalRow =
            new GenericInternalRow(PartialAggregator.empty(agg.metrics))
          override def close(): Unit = ()
        }
      case _ => new SplitGroupReader(partition.asInstanceOf[SplitGroup], readerFor)
    }

  private def readerFor(split: SplitInputPartition, counters: ScanTaskCounters)
      : PartitionReader[InternalRow] =
    plan.aggregate match {
      case Some(agg) => new IndexTables4SparkAggregateReader(plan, split, agg, counters)
      case None => new IndexTables4SparkPartitionReader(plan, split, counters)
    }
}
