package io.indextables.spark.read

import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory, Scan}
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.filters.MixedBooleanFilter
import io.indextables.spark.read.aggregate.AggregatePlan
import io.indextables.spark.transaction.Snapshot

/**
 * The search route's scan, and the pushed-aggregate route's: the splits left after pruning,
 * grouped into read tasks, and the query every task runs (and the aggregation it answers).
 * Immutable.
 * `description` shows what was pushed, so EXPLAIN and the physical plan tell the truth.
 */
final class IndexTables4SparkScan(
    plan: ReadPlan,
    groups: Seq[SplitGroup],
    totalSplits: Int,
    pushedFilters: Seq[Filter],
    indexQuery: Option[MixedBooleanFilter],
    private[spark] val snapshot: Snapshot) extends Scan with Batch {

  override def readSchema(): StructType = plan.readSchema

  private[spark] def tablePath: String = plan.tablePath
  private[spark] def readPlan: ReadPlan = plan
  private[spark] def splitGroups: Seq[SplitGroup] = groups
  private[spark] def aggregatePushed: Boolean = plan.aggregate.isDefined
  private[spark] def requiresAggregatePushdown: Boolean = plan.requireAggregatePushdown

  override def toBatch: Batch = this

  override def planInputPartitions(): Array[InputPartition] = groups.toArray[InputPartition]

  override def createReaderFactory(): PartitionReaderFactory =
    new IndexTables4SparkPartitionReaderFactory(plan)

  override def description(): String = {
    // One query per doc mapping the splits were written with; mostly one.
    val query = plan.variants.map(_.queryAstJson.getOrElse("match_all")).distinct match {
      case Seq() => "match_all"
      case Seq(q) => q
      case qs => qs.mkString("[", " | ", "]")
    }
    val iq = indexQuery.map(f => s"PushedIndexQuery: [$f], ").getOrElse("")
    val limit = plan.limit.map(l => s", PushedLimit: $l").getOrElse("")
    val agg = plan.aggregate.map(a => s"${a.describe}, ").getOrElse("")
    s"IndexTablesScan ${plan.tablePath} (version ${snapshot.version}) " +
      s"PushedFilters: [${pushedFilters.mkString(", ")}], $iq${agg}PushedQuery: $query$limit, " +
      s"Splits: ${groups.map(_.splits.size).sum}/$totalSplits, Tasks: ${groups.size}"
  }
}

private[read] object IndexTables4SparkScan {

  /** The scan of the kept splits of `in`: a search, or each split's answer to `aggregate`. */
  def plan(in: ScanInputs, aggregate: Option[AggregatePlan]): IndexTables4SparkScan = {
    val sc = org.apache.spark.sql.SparkSession.active.sparkContext
    val opts = in.table.opts
    val grouped = SplitGroups.of(
      in.splits(aggregate),
      opts.get(IndexTablesConf.SplitsPerTask),
      opts.get(IndexTablesConf.MaxSplitsPerTask),
      sc.defaultParallelism) match {
      // A global aggregate over no split still yields its one row (COUNT 0, not NULL).
      case Seq() if aggregate.exists(_.groupBy.isEmpty) => Seq(SplitGroup(Nil))
      case gs => gs
    }
    new IndexTables4SparkScan(
      in.readPlan(aggregate),
      SplitGroups.placed(grouped, SplitPlacement.live(sc)),
      in.files.size,
      in.filters.pushed,
      in.table.mixedFilter,
      in.table.snapshot)
  }
}
