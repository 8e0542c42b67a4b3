package io.indextables.spark.read

import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory, Scan, SupportsRuntimeFiltering}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.sources.{Filter, In}
import org.apache.spark.sql.types.StructType

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.metrics.ScanMetrics
import io.indextables.spark.read.aggregate.AggregatePlan
import io.indextables.spark.schema.IndexKind
import io.indextables.spark.transaction.Snapshot

/**
 * The search route's scan, and the pushed-aggregate route's: the splits left after pruning,
 * grouped into read tasks, and the query every task runs (and the aggregation it answers).
 * `description` shows what was pushed, so EXPLAIN and the physical plan tell the truth.
 *
 * A search may be narrowed once more when its job starts (`SupportsRuntimeFiltering`): Spark
 * hands it the values a join's other side holds for a key column (a MERGE's source keys, see
 * `catalyst/MergeKeyFilter`, or Spark's dynamic pruning of a join), and the scan re-plans with
 * them as one more filter: splits whose statistics exclude every value are dropped, and the
 * others search for the values. Spark still joins on the key, so the narrowing only saves work.
 * The re-planned tasks carry their own [[ReadPlan]] ([[PlannedSplitGroup]]), as the reader
 * factory was made before the values were known. Otherwise immutable.
 *
 * @param in    what the scan was planned from, for re-planning with runtime filters
 * @param plan  what every task shares
 * @param groups the read tasks
 */
final class IndexTables4SparkScan private (
    in: ScanInputs,
    plan: ReadPlan,
    groups: Seq[SplitGroup]) extends Scan with Batch with SupportsRuntimeFiltering {

  // Set once, on the driver, by `filter` before Spark plans the partitions again.
  @volatile private var narrowed: Option[IndexTables4SparkScan] = None

  override def readSchema(): StructType = plan.readSchema

  private[spark] def snapshot: Snapshot = in.table.snapshot
  private[spark] def tablePath: String = plan.tablePath
  private[spark] def readPlan: ReadPlan = plan
  private[spark] def splitGroups: Seq[SplitGroup] = groups
  private[spark] def aggregatePushed: Boolean = plan.aggregate.isDefined
  private[spark] def requiresAggregatePushdown: Boolean = plan.requireAggregatePushdown

  override def toBatch: Batch = this

  /** The table's new rows, batch by batch, from this scan's table and columns. */
  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream =
    new IndexTables4SparkMicroBatchStream(in, plan)

  override def planInputPartitions(): Array[InputPartition] = narrowed match {
    case Some(s) =>
      s.splitGroups.map(g => PlannedSplitGroup(g, s.readPlan): InputPartition).toArray
    case None => groups.toArray[InputPartition]
  }

  override def createReaderFactory(): PartitionReaderFactory =
    new IndexTables4SparkPartitionReaderFactory(plan)

  /**
   * The columns a runtime filter can narrow a search by: of the columns the scan reads (Spark
   * resolves each against them), the partition columns (pruning), and the stored raw-string
   * and integer columns every split indexes (pruning by statistics, and an exact term search).
   * None for a pushed aggregation, whose partials must cover the scan.
   */
  override def filterAttributes(): Array[NamedReference] =
    // A top-k's winners were chosen over every row: narrowing them would change the answer.
    if (aggregatePushed || in.topN.isDefined) Array.empty
    else {
      val keys = plan.readSchema.fieldNames.filter(in.table.schema.fieldNames.contains).filter {
        c =>
          in.table.partitionColumns.contains(c) || in.filters.variants.schemas.forall {
            case (schema, _) => schema.field(c).exists(f =>
                f.indexed && f.stored && (f.kind == IndexKind.RawString || f.kind == IndexKind.I64))
          }
      }
      keys.map(c => Expressions.column(c): NamedReference)
    }

  /**
   * Narrows the search by `runtime` (conjuncts on [[filterAttributes]]): the scan is planned
   * again with them added to its filters. An IN of no value matches no row.
   */
  override def filter(runtime: Array[Filter]): Unit = {
    val allowed = filterAttributes().map(_.fieldNames.mkString(".")).toSet
    val usable = runtime.toSeq.filter(_.references.forall(allowed.contains))
    if (usable.nonEmpty) {
      val none = usable.exists { case In(_, vs) => vs.isEmpty; case _ => false }
      narrowed = Some(
        if (none) new IndexTables4SparkScan(in, plan, Nil)
        else IndexTables4SparkScan.plan(
          in.copy(filters = FilterPushdown.of(in.table, in.filters.filters ++ usable)),
          None))
      RuntimeFiltering.narrowed.incrementAndGet()
    }
  }

  override def supportedCustomMetrics(): Array[CustomMetric] = ScanMetrics.all

  override def reportDriverMetrics(): Array[CustomTaskMetric] = in.pruning

  override def description(): String =
    s"${IndexTables4SparkScan.pushed(in, plan, in.limit)}, " +
      s"Splits: ${groups.map(_.splits.size).sum}/${in.files.size}, Tasks: ${groups.size}"
}

/**
 * A read task that carries the plan its splits are read with: of a search narrowed by runtime
 * filters (the narrowed query), or of a micro-batch of a stream (the batch's own plan), whose
 * reader factory was made before the plan was known.
 */
final case class PlannedSplitGroup(group: SplitGroup, plan: ReadPlan) extends InputPartition {
  override def preferredLocations(): Array[String] = group.preferredLocations()
}

/** How many scans runtime filters narrowed in this JVM (tests assert the narrowing happened). */
object RuntimeFiltering {
  val narrowed = new java.util.concurrent.atomic.AtomicLong()
}

private[read] object IndexTables4SparkScan {

  /**
   * What a search of `in` read as `plan` pushed, as EXPLAIN shows it: the header, the
   * IndexQuery tree, the aggregation, the native query (one per doc mapping the splits were
   * written with; mostly one) and the LIMIT.
   */
  def pushed(in: ScanInputs, plan: ReadPlan, limit: Option[Int]): String = {
    val query = plan.variants.map(_.queryAstJson.getOrElse("match_all")).distinct match {
      case Seq() => "match_all"
      case Seq(q) => q
      case qs => qs.mkString("[", " | ", "]")
    }
    val iq = in.table.mixedFilter.map(f => s"PushedIndexQuery: [$f], ").getOrElse("")
    val pushedLimit = limit.map(l => s", PushedLimit: $l").getOrElse("")
    val agg = plan.aggregate.map(a => s"${a.describe}, ").getOrElse("")
    val topN = in.topN.map(t => s", ${t.describe}").getOrElse("")
    val scores = plan.scoring.map { json =>
      s", Scores: BM25 over ${Ranking.statisticsOf(json).numDocs} docs of " +
        s"${in.table.snapshot.allFiles.size} splits"
    }.getOrElse("")
    s"${in.header}, $iq${agg}PushedQuery: $query$pushedLimit$topN$scores"
  }

  /**
   * The stream of `in`'s table, reading its columns (a stream pushes no filter, limit or
   * aggregate).
   */
  def microBatchStream(in: ScanInputs): MicroBatchStream =
    new IndexTables4SparkMicroBatchStream(in, in.readPlan(None))

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
      in,
      in.readPlan(aggregate),
      SplitGroups.placed(grouped, SplitPlacement.live(sc)))
  }
}
