package io.indextables.spark.read

import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation, CountStar}
import org.apache.spark.sql.types.{DataType, LongType, StructField, StructType}

import io.indextables.spark.schema.{IndexKind, TableIndexSchema}

/**
 * One GROUP BY column of a pushed aggregation: a partition column (one value per split) or a
 * data column whose values are counted by tantivy's terms aggregation on its fast field.
 */
final case class GroupColumn(name: String, dataType: DataType, isPartition: Boolean)

/**
 * An aggregation every split answers on its own, one partial row per group: the group values,
 * then `counts` COUNT(*) columns (Spark sums the partials). Immutable; built on the driver.
 *
 * @param countField a single-valued fast field whose value count (plus the matches without a
 *                   value) counts a filtered split's matches without listing them
 */
final case class AggregatePlan(
    groupBy: Seq[GroupColumn],
    counts: Int,
    countField: Option[String] = None) {

  /** The scan's output: group columns in Spark's order, then the counts. */
  def schema: StructType = StructType(
    groupBy.map(g => StructField(g.name, g.dataType, nullable = true)) ++
      (0 until counts).map(i =>
        StructField(if (i == 0) "count(*)" else s"count(*)_$i", LongType, nullable = false)))

  /** The data column counted by a terms aggregation, if any. */
  def fieldGroup: Option[GroupColumn] = groupBy.find(!_.isPartition)

  def describe: String = {
    val aggs = Seq.fill(counts)("COUNT(*)").mkString(", ")
    s"PushedAggregation: [$aggs], PushedGroupBy: [${groupBy.map(_.name).mkString(", ")}]"
  }
}

object AggregatePlan {

  /**
   * The plan for Spark's `aggregation`, if every split can answer it exactly: only COUNT(*),
   * grouped by any partition columns and at most one string column indexed as `string` (the
   * only data columns whose fast field holds exactly the value Spark groups by). None otherwise,
   * and Spark aggregates the rows itself.
   */
  def of(
      aggregation: Aggregation,
      schema: TableIndexSchema,
      tableSchema: StructType): Option[AggregatePlan] = {
    val aggs = aggregation.aggregateExpressions().toSeq
    if (aggs.isEmpty || !aggs.forall(_.isInstanceOf[CountStar])) return None
    val groups = aggregation.groupByExpressions().toSeq.map {
      case r: NamedReference if r.fieldNames().length == 1 =>
        val name = r.fieldNames().head
        tableSchema.fields.find(_.name == name).flatMap { f =>
          if (schema.isPartitionColumn(name))
            Some(GroupColumn(name, f.dataType, isPartition = true))
          else schema.field(name).filter(f => f.kind == IndexKind.RawString && f.fast)
            .map(_ => GroupColumn(name, f.dataType, isPartition = false))
        }
      case _ => None
    }
    if (groups.exists(_.isEmpty)) return None
    val columns = groups.flatten
    if (columns.count(!_.isPartition) > 1) None
    else {
      val fast =
        Seq(IndexKind.I64, IndexKind.F64, IndexKind.DateTime, IndexKind.Bool, IndexKind.RawString)
      val countField =
        fast.view.flatMap(k => schema.fields.find(f => f.kind == k && f.fast)).headOption
          .map(_.name)
      Some(AggregatePlan(columns, aggs.size, countField))
    }
  }
}
