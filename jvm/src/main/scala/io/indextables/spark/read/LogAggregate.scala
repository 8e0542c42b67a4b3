package io.indextables.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation, CountStar}
import org.apache.spark.sql.connector.read.LocalScan
import org.apache.spark.sql.types.{LongType, StructField, StructType}

import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.transaction.AddAction

/**
 * COUNT(*), grouped by partition columns at most, answered on the driver from the record
 * counts the log keeps for each split: the final rows, one per group (one row, perhaps 0,
 * without groups). Immutable.
 *
 * @param aggregation the aggregation it answers (Spark's object)
 */
final case class LogAggregate(
    aggregation: Aggregation,
    groupBy: Seq[String],
    schema: StructType,
    rows: Seq[InternalRow]) {

  def describe: String = {
    val counts = aggregation.aggregateExpressions().map(_ => "COUNT(*)").mkString(", ")
    s"PushedAggregation: [$counts], PushedGroupBy: [${groupBy.mkString(", ")}], " +
      "CountFromLog: true"
  }
}

object LogAggregate {

  /**
   * The answer to `aggregation` over the splits `files` (those the partition filters keep, all
   * of whose rows satisfy them), if it is COUNT(*) grouped by partition columns at most and
   * every split's record count is known.
   */
  def of(
      aggregation: Aggregation,
      partitionColumns: Seq[String],
      tableSchema: StructType,
      timeZone: String,
      files: Seq[AddAction]): Option[LogAggregate] = {
    val aggs = aggregation.aggregateExpressions().toSeq
    if (aggs.isEmpty || !aggs.forall(_.isInstanceOf[CountStar])) return None
    val groups = aggregation.groupByExpressions().toSeq.map {
      case r: NamedReference if r.fieldNames().length == 1 =>
        partitionColumns.find(_ == r.fieldNames().head)
      case _ => None
    }
    if (groups.exists(_.isEmpty) || files.exists(_.numRecords.isEmpty)) return None
    val columns = groups.flatten
    val counts = files.groupBy(a => columns.map(c => a.partitionValues.get(c).orNull))
      .map { case (values, fs) => values -> fs.map(_.numRecords.get).sum }
    val grouped = if (columns.isEmpty) Map(Seq.empty[String] -> counts.values.sum) else counts
    val rows = grouped.toSeq.filter(columns.isEmpty || _._2 > 0).map { case (values, n) =>
      val keys = columns.zip(values).map { case (c, v) =>
        PartitionValues.decode(v, tableSchema(c).dataType, timeZone)
      }
      new GenericInternalRow((keys ++ Seq.fill(aggs.size)(n)).toArray[Any]): InternalRow
    }
    val schema = StructType(
      columns.map(c => tableSchema(c).copy(nullable = true)) ++
        aggs.indices.map(i => StructField(s"count_$i", LongType, nullable = false)))
    Some(LogAggregate(aggregation, columns, schema, rows))
  }
}

/**
 * The scan of an aggregation the log answered: its rows are already final, and Spark plans it
 * as a local relation (with the extensions, [[io.indextables.spark.read.LogAggregate]]'s rows
 * are returned by the driver without a task). `description` says what was pushed.
 */
final class IndexTables4SparkLogScan(val answer: LogAggregate, desc: String) extends LocalScan {
  override def description(): String = desc
  override def rows(): Array[InternalRow] = answer.rows.toArray
  override def readSchema(): StructType = answer.schema
}
