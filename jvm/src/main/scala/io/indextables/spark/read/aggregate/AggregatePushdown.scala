package io.indextables.spark.read.aggregate

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.read.{FilterPushdown, ReadRoute, ScanTable}
import io.indextables.spark.schema.{IntegerTypes, TableIndexing, TableIndexSchema}
import io.indextables.spark.stats.{SplitCounts, StatsValues}

/**
 * Which aggregate route answers Spark's aggregation over one scan, if any: the aggregate half of
 * the scan builder's negotiation. An aggregation is taken only when every kept split's native
 * query selects exactly the rows Spark would aggregate, so pushing it never changes an answer.
 */
private[read] object AggregatePushdown {

  /**
   * The route that answers `aggregation` completely, so Spark adds no aggregation of its own:
   * the log, when its record counts and statistics answer it (COUNT(*) and MIN/MAX grouped by
   * partition columns at most, no filter but on partition columns); else the splits' own
   * aggregations run on the driver, when they answer it exactly and there are at most
   * [[driverMaxSplits]] of them. None otherwise.
   */
  def complete(
      aggregation: Aggregation,
      table: ScanTable,
      filters: FilterPushdown): Option[ReadRoute.AggregateRoute] =
    LogAggregate.of(
      aggregation,
      table.partitionColumns,
      table.schema,
      table.timeZone,
      filters.kept) match {
      case Some(answer)
          if filters.exact(table) && filters.data.isEmpty && table.mixedFilter.isEmpty =>
        Some(ReadRoute.LogAnswered(answer))
      case _ if filters.kept.size > driverMaxSplits(table) => None
      case _ =>
        DriverAggregate.partial(aggregation).flatMap { case (partial, outputs) =>
          splitPlan(partial, table, filters).map { p =>
            ReadRoute.DriverAnswered(
              DriverAggregate(aggregation, p, outputs, DriverAggregate.resultTypes(p, outputs)))
          }
        }
    }

  /** The route that pushes `aggregation` to the splits' tasks, whose partials Spark merges. */
  def partial(
      aggregation: Aggregation,
      table: ScanTable,
      filters: FilterPushdown): Option[ReadRoute.AggregateRoute] =
    splitPlan(aggregation, table, filters).map(ReadRoute.PushedAggregate(aggregation, _))

  /**
   * The most splits whose aggregation the driver answers: the setting, or for -1 (its default)
   * any number in local mode, where a job's tasks would run in this JVM on the same cores and
   * only add a job's scheduling and shuffle (about 0.2 s), else
   * [[IndexTablesConf.DefaultDriverMaxSplits]].
   */
  private[read] def driverMaxSplits(table: ScanTable): Int =
    table.opts.get(IndexTablesConf.AggregateDriverMaxSplits) match {
      case -1 if SparkSession.active.sparkContext.isLocal => Int.MaxValue
      case -1 => IndexTablesConf.DefaultDriverMaxSplits
      case n => n
    }

  /**
   * The plan every kept split answers `aggregation` with exactly, if there is one: the filters
   * are exact, every variant of the splits answers it the same way, and [[AggregatePlan.of]]
   * finds tantivy able to answer it exactly.
   */
  private def splitPlan(
      aggregation: Aggregation,
      table: ScanTable,
      filters: FilterPushdown): Option[AggregatePlan] = {
    // A merged companion split's docs do not follow its Parquet rows (CompanionDocOrderSuite),
    // and tantivy4java's aggregations then pair a doc's own fast fields with another row's
    // Parquet-served values (a GROUP BY on a string summed the wrong rows' numbers). Spark
    // aggregates the rows of such splits instead.
    if (filters.kept.exists(a => a.companionSourceFiles.isDefined && a.numMergeOps.exists(_ > 0)))
      return None
    val schemas: Seq[TableIndexSchema] =
      if (filters.variants.schemas.isEmpty) Seq(TableIndexing.ofTable(table.snapshot))
      else filters.variants.schemas.map(_._1)
    val plans = schemas.map { s =>
      AggregatePlan.of(
        aggregation,
        s,
        table.schema,
        exactAsDouble(table, filters, _),
        fromEpoch(filters, _),
        c => filters.kept.forall(a => SplitCounts.noneIn(a.stats, SplitCounts.SubSecondCount)(c))
      )
    }.distinct
    if (filters.exact(table) && plans.size == 1) plans.head.map { p =>
      val nonNull = filters.nonNullColumns
      // A value count of a column the filters hold non-null counts every match by itself.
      val counted = nonNull.toSeq.sorted.find { c =>
        schemas.forall(_.fields.exists(f => f.name == c && AggregatePlan.countable(f)))
      }
      p.copy(nonNullColumns = nonNull, countField = counted.orElse(p.countField))
    }
    else None
  }

  /**
   * Whether tantivy's double arithmetic is exact for the integer column `column` in every kept
   * split: its values (from the log's min/max statistics, or its type's range) times the
   * split's record count stay within 2^53, so every partial sum is an exact double.
   */
  private def exactAsDouble(table: ScanTable, filters: FilterPushdown, column: String)
      : Boolean = {
    val limit = BigInt(2).pow(53)
    val dataType = table.schema(column).dataType
    filters.kept.forall { a =>
      def stat(m: Option[Map[String, String]]) =
        m.flatMap(_.get(column)).flatMap(Option(_)).flatMap(v => scala.util.Try(BigInt(v)).toOption)
      val largest = (stat(a.minValues), stat(a.maxValues)) match {
        case (Some(lo), Some(hi)) => Some(lo.abs.max(hi.abs))
        case _ => IntegerTypes.maxMagnitude(dataType)
      }
      (a.numRecords, largest) match {
        case (Some(0L), _) => true
        case (Some(n), Some(v)) => v * n <= limit
        case _ => false
      }
    }
  }

  /**
   * Whether every kept split with rows holds no timestamp of `column` before 1970, from its min
   * statistic (a split without one may hold any).
   */
  private def fromEpoch(filters: FilterPushdown, column: String): Boolean =
    filters.kept.forall { a =>
      a.numRecords.contains(0L) ||
      a.minValues.flatMap(_.get(column)).flatMap(Option(_))
        .flatMap(v => scala.util.Try(StatsValues.parseTimestamp(v)).toOption).exists(_ >= 0L)
    }
}
