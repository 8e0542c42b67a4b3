package io.indextables.spark.read

import org.apache.spark.sql.connector.expressions.SortOrder
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownAggregates, SupportsPushDownFilters, SupportsPushDownLimit, SupportsPushDownRequiredColumns, SupportsPushDownTopN}
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType

import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.filters.{IndexQueryRegistry, MixedBooleanFilter}
import io.indextables.spark.read.aggregate.AggregatePushdown
import io.indextables.spark.transaction.Snapshot

/**
 * Negotiates pushdown for one query on the driver, then plans its scan by one [[ReadRoute]].
 * Spark offers, in order, the filters ([[FilterPushdown]]: partition pruning, min/max data
 * skipping, one native query per split variant), an aggregation ([[AggregatePushdown]]), a
 * LIMIT or a top-k (an `ORDER BY _score DESC LIMIT k`, [[Ranking.topN]]), and the required
 * columns; [[build]] decides the route ([[ReadRoute.decide]]) and
 * the route builds the Scan. Filters that are not matched exactly are handed back to Spark, so
 * pushdown never changes an answer; an aggregate is taken only when the native query is
 * exactly the filter.
 *
 * What Spark offered is kept in five fields, each set by one of its calls.
 *
 * @param opts        the read's resolved settings; its options also configure file access
 * @param mixedFilter the IndexQuery tree the Catalyst rule planned for this relation, if any
 * @param latest      for time travel to an earlier version, the table's latest snapshot: a
 *                    file of `snapshot` it no longer references may have been purged
 */
final class IndexTables4SparkScanBuilder(
    tablePath: String,
    snapshot: Snapshot,
    opts: IndexTablesOptions,
    mixedFilter: Option[MixedBooleanFilter],
    latest: Option[Snapshot] = None)
    extends ScanBuilder with SupportsPushDownFilters with SupportsPushDownRequiredColumns
    with SupportsPushDownLimit with SupportsPushDownAggregates with SupportsPushDownTopN {

  private val table = ScanTable(tablePath, snapshot, opts, mixedFilter, latest)

  private var required: StructType = table.schema
  private var limit: Option[Int] = None
  // Spark calls pushFilters only when a filter is left for it; the IndexQuery tree may be all.
  private var offered: Option[FilterPushdown] = None
  private var aggregate: Option[ReadRoute.AggregateRoute] = None
  private var topN: Option[TopN] = None
  // Whether Spark negotiated the scan: a batch read always prunes columns or pushes an
  // aggregate; Spark 3.5's and 4.0's streaming planners build the scan untouched, for a stream.
  // Spark 4.2's prunes its columns first, as a batch read's: the scans of a plain read's routes
  // all give a stream of the table (`toMicroBatchStream`).
  private var negotiated = false

  /** What the filters came to: those Spark offered, or none when it offered none. */
  private def filters: FilterPushdown = offered.getOrElse {
    val none = FilterPushdown.of(table, Nil)
    offered = Some(none)
    none
  }

  override def pushFilters(offeredFilters: Array[Filter]): Array[Filter] = {
    val f = FilterPushdown.of(table, offeredFilters.toSeq)
    offered = Some(f)
    f.post.toArray
  }

  override def pushedFilters(): Array[Filter] = filters.pushed.toArray

  override def pruneColumns(requiredSchema: StructType): Unit = {
    required = requiredSchema
    negotiated = true
  }

  override def pushLimit(n: Int): Boolean = { limit = Some(n); true }

  /** Takes an `ORDER BY _score DESC [, ...] LIMIT k` over an IndexQuery ([[Ranking.topN]]). */
  override def pushTopN(orders: Array[SortOrder], k: Int): Boolean = {
    topN = if (aggregate.isDefined) None else Ranking.topN(table, filters, orders, k)
    topN.isDefined
  }

  /** Spark keeps its sort and limit unless the top-k is answered on the driver, in order. */
  override def isPartiallyPushed(): Boolean = !topN.exists(_.onDriver)

  /**
   * True when the log, or the splits' aggregations run on the driver, answer `aggregation`
   * completely (see [[AggregatePushdown.complete]]): no job runs for it.
   */
  override def supportCompletePushDown(aggregation: Aggregation): Boolean = {
    negotiated = true
    aggregate = AggregatePushdown.complete(aggregation, table, filters)
    aggregate.isDefined
  }

  /**
   * Takes `aggregation`: by the complete answer [[supportCompletePushDown]] found for it, or
   * pushed to the splits' tasks when every split answers it exactly
   * ([[AggregatePushdown.partial]]).
   */
  override def pushAggregation(aggregation: Aggregation): Boolean = {
    negotiated = true
    if (!aggregate.exists(_.aggregation eq aggregation)) {
      aggregate = AggregatePushdown.partial(aggregation, table, filters)
    }
    aggregate.isDefined
  }

  override def build(): Scan = {
    CompanionStaleness.check(table)
    val in = ScanInputs(table, filters, required, limit, topN)
    // A stream's scan ([[IndexTables4SparkMicroBatchStream]]) reads the table by tasks; no
    // route may answer it now (on the driver, say). Spark 4.2 negotiates a stream's columns;
    // a searched stream's options say it is one.
    if (!negotiated || IndexQueryRegistry.streamIn(opts.options))
      return IndexTables4SparkScan.plan(in, None)
    val route = ReadRoute.decide(in, aggregate)
    // A log-answered aggregate reads no file: its answer holds whatever was purged.
    if (!route.isInstanceOf[ReadRoute.LogAnswered]) table.checkNotPurged(in.kept)
    route.scan(in)
  }
}
