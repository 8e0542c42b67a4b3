package io.indextables.spark.read.aggregate

import java.time.LocalDate

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation, CountStar, Max, Min}
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read.{LocalScan, Scan}
import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.metrics.ScanMetrics
import io.indextables.spark.read.ScanInputs
import io.indextables.spark.schema.{IntegerTypes, PartitionValues}
import io.indextables.spark.stats.StatsValues
import io.indextables.spark.transaction.AddAction

/**
 * COUNT(*) and MIN/MAX of integer, date and timestamp columns, grouped by partition columns at
 * most, answered on the driver from the record counts and min/max statistics the log keeps for
 * each split: the final rows, one per group (one row, COUNT perhaps 0, without groups).
 * Immutable.
 *
 * @param aggregation the aggregation it answers (Spark's object)
 */
final case class LogAggregate(
    aggregation: Aggregation,
    groupBy: Seq[String],
    schema: StructType,
    rows: Seq[InternalRow]) {

  def describe: String = {
    val aggs = aggregation.aggregateExpressions().map {
      case _: CountStar => "COUNT(*)"
      case a => a.toString
    }
    s"PushedAggregation: [${aggs.mkString(", ")}], PushedGroupBy: [${groupBy.mkString(", ")}], " +
      "AnsweredFromLog: true"
  }

  /** The log-answered route's scan: the final rows, returned by the driver (no task). */
  private[read] def scan(in: ScanInputs): Scan = new IndexTables4SparkLogScan(
    this,
    s"${in.header}, $describe, Splits: ${in.kept.size}/${in.files.size}, Tasks: 0",
    in.pruning)
}

object LogAggregate {

  /**
   * The answer to `aggregation` over the splits `files` (those the partition filters keep, all
   * of whose rows satisfy them), if it is COUNT(*), or MIN/MAX of integer, date or timestamp
   * columns, grouped by partition columns at most, and the log holds every split's record
   * count and, for each split with rows, the min/max statistics asked for (exact for these
   * types; a split whose column is all NULL has none, and then the splits answer instead).
   * COUNT(*) counts each split's rows less its deleted ones; a split with deleted rows has
   * statistics that are bounds, not values, so MIN and MAX use them only where a split without
   * deleted rows holds a value at least as extreme.
   */
  def of(
      aggregation: Aggregation,
      partitionColumns: Seq[String],
      tableSchema: StructType,
      timeZone: String,
      files: Seq[AddAction]): Option[LogAggregate] = {
    val aggs = aggregation.aggregateExpressions().toSeq
    def dataColumn(e: AnyRef): Option[StructField] = e match {
      case r: NamedReference if r.fieldNames().length == 1 =>
        tableSchema.fields.find(f => f.name == r.fieldNames().head)
          .filter(f => !partitionColumns.contains(f.name))
          .filter(f =>
            IntegerTypes.contains(f.dataType) || f.dataType == DateType ||
              f.dataType == TimestampType)
      case _ => None
    }
    val metrics: Seq[Option[Seq[AddAction] => Option[Any]]] = aggs.map {
      case _: CountStar => Some((fs: Seq[AddAction]) => Some(fs.map(_.liveRecords.get).sum))
      case m: Min => dataColumn(m.column).map(f => bound(f, _.minValues, isMin = true))
      case m: Max => dataColumn(m.column).map(f => bound(f, _.maxValues, isMin = false))
      case _ => None
    }
    val groups = aggregation.groupByExpressions().toSeq.map {
      case r: NamedReference if r.fieldNames().length == 1 =>
        partitionColumns.find(_ == r.fieldNames().head)
      case _ => None
    }
    if (aggs.isEmpty || metrics.exists(_.isEmpty) || groups.exists(_.isEmpty) ||
      files.exists(_.numRecords.isEmpty)) return None
    val columns = groups.flatten
    val byGroup = files.filter(_.liveRecords.exists(_ > 0))
      .groupBy(a => columns.map(c => a.partitionValues.get(c).orNull))
    val grouped = if (columns.isEmpty) Map(Seq.empty[String] -> byGroup.values.flatten.toSeq)
    else byGroup
    val rows = grouped.toSeq.map { case (values, fs) =>
      val keys = columns.zip(values).map { case (c, v) =>
        PartitionValues.decode(v, tableSchema(c).dataType, timeZone)
      }
      metrics.flatten.map(m => m(fs)) match {
        case answers if answers.forall(_.isDefined) =>
          Some(new GenericInternalRow((keys ++ answers.map(_.get)).toArray[Any]): InternalRow)
        case _ => None
      }
    }
    if (rows.exists(_.isEmpty)) return None
    val schema = StructType(
      columns.map(c => tableSchema(c).copy(nullable = true)) ++
        aggs.zipWithIndex.map {
          case (_: CountStar, i) => StructField(s"agg_$i", LongType, nullable = false)
          case (a, i) =>
            StructField(s"agg_$i", dataColumn(a.children().head).get.dataType, nullable = true)
        })
    Some(LogAggregate(aggregation, columns, schema, rows.flatten))
  }

  /** MIN or MAX of `f` over splits with rows, from their statistics; None if one lacks them. */
  private def bound(
      f: StructField,
      stats: AddAction => Option[Map[String, String]],
      isMin: Boolean): Seq[AddAction] => Option[Any] = { fs =>
    // A statistic in another writer's notation is no answer: the splits answer instead.
    val values = fs.map { a =>
      stats(a).flatMap(_.get(f.name)).flatMap(Option(_))
        .flatMap(s => scala.util.Try(parse(f, s)).toOption)
    }
    if (values.exists(_.isEmpty)) None
    else if (values.isEmpty) Some(null)
    else {
      // A split with deleted rows may have lost the row its statistic describes: its bound
      // counts only when another split's exact one is at least as extreme.
      val (partial, exact) = fs.zip(values.flatten).partition(_._1.deletionVector.isDefined)
      def beyond(a: Long, b: Long) = if (isMin) a < b else a > b
      if (exact.isEmpty) None
      else {
        val best = exact.map(_._2).reduce((a, b) => if (beyond(a, b)) a else b)
        if (partial.exists(p => beyond(p._2, best))) None else Some(convert(f, best))
      }
    }
  }

  /** A statistic as a comparable long (days, microseconds or the number). */
  private def parse(f: StructField, s: String): Long = f.dataType match {
    case DateType => LocalDate.parse(s).toEpochDay
    case TimestampType => StatsValues.parseTimestamp(s)
    case _ => s.toLong
  }

  private def convert(f: StructField, v: Long): Any = f.dataType match {
    case DateType => v.toInt
    case TimestampType => v
    case t => IntegerTypes.narrow(t, v).getOrElse(
        throw IndexTablesErrors.internalError(s"statistic $v of ${f.name} is no ${t.simpleString}"))
  }
}

/**
 * The scan of an aggregation the log answered: its rows are already final, and Spark plans it
 * as a local relation (with the extensions, [[LogAggregate]]'s rows
 * are returned by the driver without a task). `description` says what was pushed.
 */
final class IndexTables4SparkLogScan(
    val answer: LogAggregate,
    desc: String,
    metrics: Array[CustomTaskMetric])
    extends LocalScan {
  override def description(): String = desc
  override def supportedCustomMetrics(): Array[CustomMetric] = ScanMetrics.all
  // What planning pruned: no split is searched, the log answers.
  override def reportDriverMetrics(): Array[CustomTaskMetric] = metrics
  override def rows(): Array[InternalRow] = answer.rows.toArray
  override def readSchema(): StructType = answer.schema
}
