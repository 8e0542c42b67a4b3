package io.indextables.spark.read

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.Scan
import org.apache.spark.sql.sources.IsNotNull
import org.apache.spark.sql.types.{StringType, StructType}

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.metrics.ScanMetrics
import io.indextables.spark.read.aggregate.{AggregatePlan, DriverAggregate, LogAggregate}
import io.indextables.spark.transaction.{AddAction, TableLayout, TablePaths}
import io.indextables.spark.util.SerializableHadoopConf

/**
 * How one scan reads the table: the one family of read routes, chosen in one place
 * ([[ReadRoute.decide]]) once Spark has offered the scan builder its filters, columns, LIMIT
 * and aggregation. Each route builds its own Scan, in its own file:
 *  - [[ReadRoute.Search]]: tasks search the splits and fetch the matching rows
 *    ([[IndexTables4SparkScan]]);
 *  - [[ReadRoute.Parquet]]: a companion table's scan with nothing for the index to do reads
 *    the Parquet files with Spark's vectorized reader ([[CompanionParquetScan]]);
 *  - the aggregate routes ([[ReadRoute.AggregateRoute]], in `read/aggregate/`): answered from
 *    the log's statistics, answered by the splits on the driver, or pushed to the splits'
 *    tasks.
 */
private[read] sealed trait ReadRoute {
  def scan(in: ScanInputs): Scan
}

private[read] object ReadRoute {

  /**
   * The splits are searched with the pushed query and the matching rows returned: on the
   * driver when the answer is small ([[DriverSearch]]), else by tasks.
   */
  case object Search extends ReadRoute {
    def scan(in: ScanInputs): Scan =
      DriverSearch.scan(in).getOrElse(IndexTables4SparkScan.plan(in, None))
  }

  /** A pushed top-k by `_score`: the table's best rows only are read ([[Ranking]]). */
  final case class Ranked(topN: TopN) extends ReadRoute {
    def scan(in: ScanInputs): Scan = Ranking.scan(in, topN)
  }

  /** A companion table's Parquet files, read by Spark's reader; `reason` shows in EXPLAIN. */
  final case class Parquet(reason: String) extends ReadRoute {
    def scan(in: ScanInputs): Scan = CompanionParquetScan.plan(in, reason)
  }

  /** A route that answers Spark's `aggregation` (so Spark does not aggregate the rows). */
  sealed trait AggregateRoute extends ReadRoute {
    def aggregation: Aggregation
  }

  /** Answered completely from the log's record counts and statistics: no task runs. */
  final case class LogAnswered(answer: LogAggregate) extends AggregateRoute {
    def aggregation: Aggregation = answer.aggregation
    def scan(in: ScanInputs): Scan = answer.scan(in)
  }

  /** Answered completely by the few kept splits' aggregations, run on the driver: no job runs. */
  final case class DriverAnswered(answer: DriverAggregate) extends AggregateRoute {
    def aggregation: Aggregation = answer.aggregation
    def scan(in: ScanInputs): Scan = answer.scan(in)
  }

  /** Each split's task answers `plan` with partial rows, which Spark merges. */
  final case class PushedAggregate(aggregation: Aggregation, plan: AggregatePlan)
      extends AggregateRoute {
    def scan(in: ScanInputs): Scan = IndexTables4SparkScan.plan(in, Some(plan))
  }

  /**
   * The route of a scan: an aggregation's route when one was taken, a pushed top-k's; else for
   * a companion table
   * with nothing for the index to do, the Parquet files, when every kept split has them (and,
   * with deleted rows, docs in row order), and the scan reads the columns of its pushed IS NOT
   * NULL filters (which the Parquet route applies itself) and no metadata column; else a search.
   */
  def decide(in: ScanInputs, aggregate: Option[AggregateRoute]): ReadRoute =
    aggregate.orElse(in.topN.map(Ranked)).getOrElse {
      in.filters.parquetReason.filter { _ =>
        // A split holding its own rows (which no companion table should have) is read by the
        // search route, where no row is left out; so is a split with deleted rows whose docs
        // are not known rows of its files (the Parquet route skips deleted rows by position).
        in.nonNullRead && MetadataColumns.in(in.required, in.table.schema).isEmpty &&
        in.kept.forall(a =>
          a.companionSourceFiles.exists(_.nonEmpty) &&
            (a.deletionVector.isEmpty || a.companionDocsInRowOrder.contains(true)))
      }.map(Parquet).getOrElse(Search)
    }
}

/**
 * Everything a route plans its scan from: the table, what the filters came to, the columns
 * Spark asked for, a pushed LIMIT or top-k by `_score`, and for a top-k its selected splits
 * and their winners (which are then all a search reads) and the statistics they were selected
 * by (`scored`, the JSON of a `rank.RankStatistics`). Immutable.
 */
private[read] final case class ScanInputs(
    table: ScanTable,
    filters: FilterPushdown,
    required: StructType,
    limit: Option[Int],
    topN: Option[TopN] = None,
    selected: Option[Seq[SplitInputPartition]] = None,
    scored: Option[String] = None) {

  def files: Seq[AddAction] = filters.files
  def kept: Seq[AddAction] = filters.kept
  private def snapshot = table.snapshot

  /** The start of every route's description: the table, its version and the pushed filters. */
  def header: String =
    s"IndexTablesScan ${table.tablePath} (version ${snapshot.version}$sourceNote) " +
      s"PushedFilters: [${filters.pushed.mkString(", ")}]"

  /** The external source a companion index reflects, and its version, for the plan. */
  def sourceNote: String = TableLayout.sourceOf(snapshot).fold("")(s => s", source $s")

  /**
   * What planning decided, as the scan's driver metrics (`metrics/ScanMetrics`): the splits of
   * the snapshot, and those partition values and min/max statistics pruned. A snapshot read
   * through an Avro state whose manifests its partition bounds skipped, not loaded whole, counts
   * the splits of the manifests it read.
   */
  lazy val pruning: Array[CustomTaskMetric] = {
    val inSnapshot = if (snapshot.filesLoaded) snapshot.numFiles.toLong else files.size.toLong
    val afterPartitions =
      files.count(a => table.pruner.mayMatchPartition(a.partitionValues, filters.filters))
    ScanMetrics.driver(inSnapshot, afterPartitions.toLong, kept.size.toLong)
  }

  /** Whether the scan reads every column its pushed IS NOT NULL filters name. */
  def nonNullRead: Boolean = filters.pushed.forall {
    case IsNotNull(c) => table.partitionColumns.contains(c) || required.fieldNames.contains(c)
    case _ => true
  }

  /** The kept splits as read tasks take them, for a search or `aggregate`. */
  def splits(aggregate: Option[AggregatePlan]): Seq[SplitInputPartition] =
    selected.getOrElse(splitsOf(kept, aggregate))

  /** The splits `adds` as read tasks take them (variant 0 for a split the scan does not keep). */
  def splitsOf(adds: Seq[AddAction], aggregate: Option[AggregatePlan])
      : Seq[SplitInputPartition] = {
    // The string columns a pushed aggregation groups by: their log minimums go to the splits.
    val stringGroups = aggregate.toSeq.flatMap(_.dataGroups)
      .filter(g => g.bucket.isEmpty && g.dataType == StringType).map(_.name)
    adds.map { a =>
      // A path outside the table fails here, on the driver, before any task starts.
      TablePaths.resolve(snapshot.tablePath, a.path)
      SplitInputPartition(
        a.path,
        a.partitionValues,
        a.numRecords,
        Some(a.size),
        a.footerStartOffset.getOrElse(0L),
        a.footerEndOffset.getOrElse(0L),
        snapshot.docMappingFor(a),
        table.hasLongTokens(a),
        filters.variants.ofSplit.getOrElse(a.path, 0),
        stringGroups.flatMap(c => a.minValues.flatMap(_.get(c)).map(c -> _)).toMap,
        companionFiles = a.companionSourceFiles.getOrElse(Nil),
        companionSizes = a.companionSizes,
        deletionVector = a.deletionVector
      )
    }
  }

  /** What every task (or the driver) of a search or of `aggregate` shares. */
  def readPlan(aggregate: Option[AggregatePlan]): ReadPlan = {
    val plan = unscoredPlan(aggregate)
    // Scores are computed for a read of `_score` or a top-k by it, when there is a text clause.
    val scores = aggregate.isEmpty && plan.variants.exists(_.scoreQueryJson.isDefined) &&
      (topN.isDefined || plan.metadataColumns.contains(MetadataColumns.Score))
    if (!scores) plan else plan.copy(scoring = Some(scoring))
  }

  // The table-wide statistics of the scan's text clauses, gathered once per planned scan (or
  // handed on from the scan that selected a top-k's splits, `scored`).
  private lazy val scoring: String = scored.getOrElse(
    Ranking.statisticsJson(Ranking.statistics(this, unscoredPlan(None))))

  private def unscoredPlan(aggregate: Option[AggregatePlan]): ReadPlan = {
    val spark = SparkSession.active
    val opts = table.opts
    val readVariants = filters.variants.schemas.zip(filters.translations).zipWithIndex.map {
      case (((schema, _), (q, noTokens)), i) =>
        ReadVariant(
          q,
          noTokens,
          if (aggregate.isDefined) Nil
          // As Spark asked for each column: a struct may come pruned to the fields it needs.
          else required.fields.toSeq.flatMap(f =>
            schema.field(f.name).map(_.copy(dataType = f.dataType))).filter(_.stored),
          filters.scoreQueries(i)
        )
    }
    ReadPlan(
      tablePath = table.tablePath,
      hadoopConf =
        new SerializableHadoopConf(spark.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)),
      readSchema = aggregate.map(_.schema).getOrElse(required),
      partitionSchema = StructType(table.partitionColumns.map(c => table.schema(c))),
      timeZone = table.timeZone,
      variants = readVariants,
      limit = limit,
      batchSize = opts.get(IndexTablesConf.ReadBatchSize),
      cacheMaxSize = opts.get(IndexTablesConf.CacheMaxSize),
      queryCache = opts.get(IndexTablesConf.QueryCacheEnabled),
      aggregate = aggregate,
      requireAggregatePushdown = opts.get(IndexTablesConf.RequireAggregatePushdown),
      diskCache = SplitCaches.diskCache(opts),
      parquetRoot =
        if (table.companion) Some(TableLayout.parquetRoot(snapshot).toString) else None,
      parquetPathsFromDirectory = TableLayout.parquetPathsFromDirectory(snapshot),
      metadataColumns = MetadataColumns.in(required, table.schema)
    )
  }
}
