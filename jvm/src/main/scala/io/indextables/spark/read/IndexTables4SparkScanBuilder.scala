package io.indextables.spark.read

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownAggregates, SupportsPushDownFilters, SupportsPushDownLimit, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.sources.{Filter, IsNotNull}
import org.apache.spark.sql.types.{StringType, StructType}
import org.apache.spark.util.SerializableConfiguration

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions, TableIndexing}
import io.indextables.spark.filters.{FilterLogic, FiltersToQueryConverter, IndexQueryParsing, ManifestPruner, MixedBooleanFilter, SplitPruner}
import io.indextables.spark.schema.{TableIndexSchema, TokenLimit}
import io.indextables.spark.stats.StatsValues
import io.indextables.spark.transaction.{AddAction, Snapshot, TableLayout, TablePaths}
import io.indextables.spark.util.SerializableHadoopConf
import io.indextables.tantivy4java.split.{SplitBooleanQuery, SplitQuery}

/**
 * Negotiates pushdown for one query on the driver: filters (translated to one native query,
 * plus partition pruning and min/max data skipping), required columns, LIMIT and COUNT(*)
 * aggregates. Filters that are not matched exactly are handed back to Spark, so pushdown never
 * changes an answer; an aggregate is taken only when the native query is exactly the filter.
 *
 * @param opts       the read's resolved settings; its options also configure file access
 * @param mixedFilter the IndexQuery tree the Catalyst rule planned for this relation, if any
 */
final class IndexTables4SparkScanBuilder(
    tablePath: String,
    snapshot: Snapshot,
    opts: IndexTablesOptions,
    mixedFilter: Option[MixedBooleanFilter])
    extends ScanBuilder with SupportsPushDownFilters with SupportsPushDownRequiredColumns
    with SupportsPushDownLimit with SupportsPushDownAggregates {

  private val tableSchema = TableIndexing.tableSchema(snapshot)
  private val partitionColumns = snapshot.metadata.partitionColumns

  private var required: StructType = tableSchema
  private var allFilters: Seq[Filter] = Nil
  private var pushed: Seq[Filter] = Nil
  private var postFilters: Seq[Filter] = Nil
  // Spark calls pushFilters only when a filter is left for it; the IndexQuery tree may be all.
  private var translations: IndexedSeq[(Option[String], Option[String])] = IndexedSeq.empty
  private var filtersPushed = false
  private var limit: Option[Int] = None
  private var aggregate: Option[AggregatePlan] = None
  private var dataFilters: Seq[Filter] = Nil
  // The rows of an aggregation answered from the log's record counts (no task runs).
  private var logAnswer: Option[LogAggregate] = None
  // An aggregation over few splits, answered completely on the driver (no job runs).
  private var driverAnswer: Option[DriverAggregate] = None

  /**
   * The distinct ways the candidate splits hold the table's columns (from their doc mappings),
   * and each split's variant. Known once the filters are, since they choose the candidates.
   */
  private lazy val variants: (IndexedSeq[(TableIndexSchema, Option[String])], Map[String, Int]) = {
    val bySplit = candidates._2.map { a =>
      (a.path, (TableIndexing.forSplit(snapshot, a), snapshot.docMappingFor(a)))
    }
    val distinct = bySplit.map(_._2._1).distinct.toIndexedSeq
    val index = distinct.zipWithIndex.toMap
    // Each variant's own mapping, then the others' fields: an IndexQuery may name a column
    // some splits lack (see IndexQueryParsing).
    val all = bySplit.flatMap(_._2._2).distinct
    val mappings = distinct.map { v =>
      v -> TableIndexing.union(bySplit.collect { case (_, (w, Some(m))) if w == v => m } ++ all)
    }
    (mappings, bySplit.map { case (path, (v, _)) => path -> index(v) }.toMap)
  }

  override def pushFilters(filters: Array[Filter]): Array[Filter] = {
    allFilters = filters.toSeq
    filtersPushed = true
    val (partitionOnly, data) = filters.toSeq.partition { f =>
      f.references.nonEmpty && f.references.forall(partitionColumns.contains)
    }
    val perVariant = variants._1.map { case (schema, mapping) =>
      val mixed = mixedFilter.map(f => IndexQueryParsing.toQuery(f, schema, mapping, tablePath))
      val (q, pushedData, postData) = new FiltersToQueryConverter(schema).translateConjuncts(data)
      // The same conjuncts without token queries, for splits holding over-long tokens. The
      // IndexQuery tree stays as it is: the user's query says what to search.
      val noTokens = new FiltersToQueryConverter(schema, tokenQueries = false)
        .translateConjuncts(data)._1
      (
        withMixed(q, mixed).map(_.toQueryAstJson),
        withMixed(noTokens, mixed).map(_.toQueryAstJson),
        pushedData,
        postData,
        schema)
    }
    translations = perVariant.map(v => (v._1, v._2))
    parquetReason = parquetRouteReason(data, perVariant.map(_._3))
    // A filter is pushed where every variant takes it; Spark re-checks any that one does not.
    val postData = data.filter(f => perVariant.exists(_._4.contains(f)))
    val pushedData =
      if (perVariant.isEmpty) Nil else data.filter(f => perVariant.forall(_._3.contains(f)))
    perVariant.foreach { v =>
      postData.foreach { f =>
        f.references.find(c => v._5.field(c).exists(!_.stored)).foreach { c =>
          throw IndexTablesErrors.filterOnIndexOnlyColumn(f.toString, c)
        }
      }
    }
    pushed = pushedData ++ partitionOnly
    // A partition filter is answered by pruning alone when it is TRUE for every split pruning
    // keeps (they are all of one value per split); otherwise (a form the pruner cannot compute
    // exactly) Spark re-checks it on the values the reader attaches. Data filters come back
    // unless their query was exact.
    val exactPartition = partitionOnly.filter { f =>
      candidates._2.forall(a => pruner.isTrueForPartition(a.partitionValues, Seq(f)))
    }
    postFilters = postData ++ partitionOnly.filterNot(exactPartition.contains)
    dataFilters = data
    postFilters.toArray
  }

  /**
   * True when the log alone answers `aggregation` completely (COUNT(*) grouped by partition
   * columns at most, no filter but on partition columns): the driver then sums the splits'
   * record counts and no task runs. Otherwise true when the splits answer it exactly and there
   * are at most [[driverMaxSplits]] of them: [[build]] then runs their
   * aggregations on the driver and merges them ([[DriverAggregate]]), again without a job.
   */
  override def supportCompletePushDown(aggregation: Aggregation): Boolean = {
    if (!filtersPushed) pushFilters(Array.empty)
    LogAggregate.of(aggregation, partitionColumns, tableSchema, timeZone, candidates._2) match {
      case Some(answer) if exactFilters && dataFilters.isEmpty && mixedFilter.isEmpty =>
        logAnswer = Some(answer)
        true
      case _ =>
        driverAnswer =
          if (candidates._2.size > driverMaxSplits) None
          else DriverAggregate.partial(aggregation).flatMap { case (partial, outputs) =>
            splitPlan(partial).map { p =>
              DriverAggregate(aggregation, p, outputs, DriverAggregate.resultTypes(p, outputs))
            }
          }
        driverAnswer.isDefined
    }
  }

  /**
   * The most splits whose aggregation the driver answers: the setting, or for -1 (its default)
   * any number in local mode, where a job's tasks would run in this JVM on the same cores and
   * only add a job's scheduling and shuffle (about 0.2 s), else
   * [[IndexTablesConf.DefaultDriverMaxSplits]].
   */
  private def driverMaxSplits: Int = opts.get(IndexTablesConf.AggregateDriverMaxSplits) match {
    case -1 if SparkSession.active.sparkContext.isLocal => Int.MaxValue
    case -1 => IndexTablesConf.DefaultDriverMaxSplits
    case n => n
  }

  /** No filter is left for Spark, and no split is read with a different query. */
  private def exactFilters: Boolean = {
    val tokensDiffer = translations.exists { case (q, noTokens) => q != noTokens }
    postFilters.isEmpty && (!tokensDiffer || !candidates._2.exists(hasLongTokens))
  }

  /**
   * Takes the aggregation when every split's native query selects exactly the rows Spark would
   * aggregate (no filter left for Spark, no split read with the token-free query while the
   * query has token clauses), every variant of the splits answers it the same way, and
   * [[AggregatePlan.of]] finds tantivy able to answer it exactly; the log answers it when it
   * can (see [[supportCompletePushDown]]).
   */
  override def pushAggregation(aggregation: Aggregation): Boolean = {
    if (!filtersPushed) pushFilters(Array.empty)
    if (logAnswer.exists(_.aggregation eq aggregation)) return true
    logAnswer = None
    driverAnswer.filter(_.aggregation eq aggregation).foreach { d =>
      aggregate = Some(d.plan)
      return true
    }
    driverAnswer = None
    aggregate = splitPlan(aggregation)
    aggregate.isDefined
  }

  /** The plan every split answers `aggregation` with exactly, if there is one. */
  private def splitPlan(aggregation: Aggregation): Option[AggregatePlan] = {
    val schemas =
      if (variants._1.isEmpty) Seq(TableIndexing.ofTable(snapshot)) else variants._1.map(_._1)
    val plans =
      schemas.map { s =>
        AggregatePlan.of(aggregation, s, tableSchema, exactAsDouble, fromEpoch)
      }.distinct
    if (exactFilters && plans.size == 1) plans.head.map { p =>
      val nonNull = nonNullColumns
      // A value count of a column the filters hold non-null counts every match by itself.
      val counted = nonNull.toSeq.sorted.find { c =>
        schemas.forall(_.fields.exists(f => f.name == c && AggregatePlan.countable(f)))
      }
      p.copy(nonNullColumns = nonNull, countField = counted.orElse(p.countField))
    }
    else None
  }

  /** Columns a top-level pushed filter holds non-null: IsNotNull, or a comparison with them. */
  private def nonNullColumns: Set[String] = dataFilters.collect {
    case IsNotNull(c) => c
    case f if FilterLogic.nullRejecting(f) => f.references.head
  }.toSet

  /** The string columns the pushed aggregation groups by (their log minimums go to the splits). */
  private lazy val stringGroups: Seq[String] = aggregate.toSeq.flatMap(_.dataGroups)
    .filter(g => g.bucket.isEmpty && g.dataType == StringType).map(_.name)

  /** The log's minimum of each of [[stringGroups]] in split `a`. */
  private def keyMins(a: AddAction): Map[String, String] =
    stringGroups.flatMap(c => a.minValues.flatMap(_.get(c)).map(c -> _)).toMap

  /**
   * Whether tantivy's double arithmetic is exact for the integer column `column` in every
   * candidate split: its values (from the log's min/max statistics, or its type's range) times
   * the split's record count stay within 2^53, so every partial sum is an exact double.
   */
  private def exactAsDouble(column: String): Boolean = {
    val limit = BigInt(2).pow(53)
    val dataType = tableSchema(column).dataType
    candidates._2.forall { a =>
      def stat(m: Option[Map[String, String]]) =
        m.flatMap(_.get(column)).flatMap(Option(_)).flatMap(v => scala.util.Try(BigInt(v)).toOption)
      val largest = (stat(a.minValues), stat(a.maxValues)) match {
        case (Some(lo), Some(hi)) => Some(lo.abs.max(hi.abs))
        case _ if dataType == org.apache.spark.sql.types.IntegerType =>
          Some(BigInt(Int.MinValue).abs)
        case _ => None
      }
      (a.numRecords, largest) match {
        case (Some(0L), _) => true
        case (Some(n), Some(v)) => v * n <= limit
        case _ => false
      }
    }
  }

  /**
   * Whether every candidate split with rows holds no timestamp of `column` before 1970, from
   * its min statistic (a split without one may hold any).
   */
  private def fromEpoch(column: String): Boolean = candidates._2.forall { a =>
    a.numRecords.contains(0L) ||
    a.minValues.flatMap(_.get(column)).flatMap(Option(_))
      .flatMap(v => scala.util.Try(StatsValues.parseTimestamp(v)).toOption).exists(_ >= 0L)
  }

  /** Spark's translated conjuncts and the IndexQuery tree: both must hold. */
  private def withMixed(q: Option[SplitQuery], mixedQuery: Option[SplitQuery])
      : Option[SplitQuery] = (q, mixedQuery) match {
    case (Some(a), Some(b)) => Some(new SplitBooleanQuery().addMust(a).addMust(b))
    case (a, b) => a.orElse(b)
  }

  override def pushedFilters(): Array[Filter] = pushed.toArray

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  override def pushLimit(n: Int): Boolean = { limit = Some(n); true }

  private def timeZone: String = SparkSession.active.sessionState.conf.sessionLocalTimeZone

  /**
   * The files of the partitions the pushed filters may match, and of those the ones min/max
   * statistics keep: planned once (after pushFilters) for both the aggregate decision and the
   * scan. Whole Avro manifests and blocks whose partition bounds rule the read out are never
   * loaded, and entries of other partitions are skipped as they are decoded.
   */
  private lazy val pruner = new SplitPruner(
    tableSchema,
    partitionColumns,
    timeZone,
    opts.get(IndexTablesConf.StatsTruncationMaxLength))

  private lazy val candidates: (Seq[AddAction], Seq[AddAction]) = {
    // Taken here, on this thread: the log may call the predicates below from its reader
    // threads while this lazy val holds the builder's lock, and a lazy pruner would wait on it.
    val pruner = this.pruner
    val manifestPruner = new ManifestPruner(tableSchema, partitionColumns)
    val only = opts.options.collectFirst {
      case (k, v) if k.equalsIgnoreCase(IndexTablesOptions.OnlySplitsOption) =>
        v.split("\n").filter(_.nonEmpty).toSet
    }
    val files = snapshot.filesMatching(
      bounds => manifestPruner.mayMatch(bounds, allFilters),
      values => pruner.mayMatchPartition(values, allFilters))
      .filter(a => only.forall(_.contains(a.path)))
    (files, files.filter(a => pruner.mayMatch(a, allFilters)))
  }

  private def hasLongTokens(a: AddAction): Boolean =
    a.splitTags.exists(_.contains(TokenLimit.LongTokensTag))

  /** Whether the table is of the companion layout: its rows live in Parquet files. */
  private def companion: Boolean = TableLayout.of(snapshot.protocol) == TableLayout.Companion

  private def plan0HadoopConf(spark: SparkSession) =
    spark.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)

  /**
   * Why a scan of a companion table reads the Parquet files directly, with nothing for the
   * index to do: no query for any split and no pushed aggregation. None when the index is used.
   */
  private var parquetReason: Option[String] = None

  /**
   * Why a scan of a companion table with data filters `data` reads its Parquet files rather than
   * search, given the filters each variant's translation takes (`pushedPerVariant`): no search
   * (an IndexQuery is one), and no filter the index answers but IS NOT NULL, which selects
   * nearly every row (the Parquet route then drops the rows with NULLs itself, as the filters
   * were pushed for an aggregation the index may still answer). None when the scan searches.
   */
  private def parquetRouteReason(data: Seq[Filter], pushedPerVariant: Seq[Seq[Filter]])
      : Option[String] = {
    val selective = pushedPerVariant.flatten.exists {
      case _: IsNotNull => false
      case _ => true
    }
    // With no candidate split, no variant says what the index takes: the index route (which
    // reads nothing) shows the pushed query as on any table.
    val indexRoute =
      opts.options.exists(_._1.equalsIgnoreCase(IndexTablesOptions.IndexRouteOption))
    if (!companion || mixedFilter.isDefined || selective || indexRoute) None
    else if (pushedPerVariant.isEmpty && data.nonEmpty) None
    else if (data.isEmpty) Some("no filter for the index")
    else Some("no selective filter for the index")
  }

  /** Whether the scan reads every column its pushed IS NOT NULL filters name. */
  private def nonNullRead: Boolean =
    pushed.forall {
      case IsNotNull(c) => partitionColumns.contains(c) || required.fieldNames.contains(c)
      case _ => true
    }

  /** The Parquet route's scan (see [[CompanionParquetScan]]), when [[parquetReason]] is one. */
  private def parquetRoute(spark: SparkSession, files: Seq[AddAction], kept: Seq[AddAction])
      : Option[Scan] = parquetReason.filter { _ =>
    // Every kept split must have its rows in Parquet: a split holding its own rows (which no
    // companion table should have) is read by the index route, where no row is left out.
    aggregate.isEmpty && nonNullRead && kept.forall(_.companionSourceFiles.exists(_.nonEmpty))
  }.map { reason =>
    val parquetFiles = kept.flatMap { a =>
      a.companionSourceFiles.getOrElse(Nil).map { f =>
        TablePaths.resolve(TableLayout.parquetRoot(snapshot), f)
        CompanionParquetFile(f, a.path, a.partitionValues, a.numRecords)
      }
    }
    val partitionNames = partitionColumns.toSet
    val readData = StructType(required.fields.filterNot(f => partitionNames.contains(f.name)))
    val readPartitions = StructType(partitionColumns.flatMap(c => required.find(_.name == c)))
    val dataSchema = StructType(tableSchema.fields.filterNot(f => partitionNames.contains(f.name)))
    val groups = SplitGroups.of(
      parquetFiles.map(f =>
        SplitInputPartition(
          f.path,
          f.partitionValues,
          f.numRecords,
          None,
          0L,
          0L,
          None,
          hasLongTokens = false)),
      opts.get(IndexTablesConf.SplitsPerTask),
      opts.get(IndexTablesConf.MaxSplitsPerTask),
      spark.sparkContext.defaultParallelism
    ).map { g =>
      val byPath = parquetFiles.map(f => f.path -> f).toMap
      CompanionParquetGroup(g.splits.map(s => byPath(s.path)), Nil)
    }
    // The IS NOT NULL filters pushed (the only data filters the route takes): dropped here.
    val nonNull = pushed.collect { case IsNotNull(c) if !partitionNames.contains(c) => c }
    new CompanionParquetScan(
      tablePath,
      TableLayout.parquetRoot(snapshot).toString,
      snapshot.version,
      groups,
      files.size,
      dataSchema,
      readData,
      readPartitions,
      dataFilters,
      pushed,
      new SerializableConfiguration(plan0HadoopConf(spark)),
      timeZone,
      reason,
      nonNull.distinct
    )
  }

  override def build(): Scan = {
    if (!filtersPushed) pushFilters(Array.empty)
    val spark = SparkSession.active
    val (files, kept) = candidates
    logAnswer.foreach { answer =>
      return new IndexTables4SparkLogScan(
        answer,
        s"IndexTablesScan $tablePath (version ${snapshot.version}) " +
          s"PushedFilters: [${pushed.mkString(", ")}], ${answer.describe}, " +
          s"Splits: ${kept.size}/${files.size}, Tasks: 0"
      )
    }
    val splits = kept.map { a =>
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
        hasLongTokens(a),
        variants._2(a.path),
        keyMins(a),
        companionFiles = a.companionSourceFiles.getOrElse(Nil)
      )
    }
    parquetRoute(spark, files, kept).foreach(scan => return scan)
    val readVariants = variants._1.zip(translations).map { case ((schema, _), (q, noTokens)) =>
      ReadVariant(
        q,
        noTokens,
        if (aggregate.isDefined) Nil
        // As Spark asked for each column: a struct may come pruned to the fields it needs.
        else required.fields.toSeq.flatMap(f =>
          schema.field(f.name).map(_.copy(dataType = f.dataType)))
          .filter(_.stored)
      )
    }
    val plan = ReadPlan(
      tablePath = tablePath,
      hadoopConf =
        new SerializableHadoopConf(spark.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)),
      readSchema = aggregate.map(_.schema).getOrElse(required),
      partitionSchema = StructType(partitionColumns.map(c => tableSchema(c))),
      timeZone = timeZone,
      variants = readVariants,
      limit = limit,
      batchSize = opts.get(IndexTablesConf.ReadBatchSize),
      cacheMaxSize = opts.get(IndexTablesConf.CacheMaxSize),
      queryCache = opts.get(IndexTablesConf.QueryCacheEnabled),
      aggregate = aggregate,
      requireAggregatePushdown = opts.get(IndexTablesConf.RequireAggregatePushdown),
      diskCache = SplitCaches.diskCache(opts),
      parquetRoot =
        if (companion)
          Some(TableLayout.parquetRoot(snapshot).toString)
        else None
    )
    driverAnswer.foreach { d =>
      // Twice as many threads as cores: a thread waits in each native call while tantivy4java's
      // runtime searches, so one per core leaves cores idle (GROUP BY level over 20 splits: 36
      // to 39 ms with 2 threads on 2 cores, 28 to 35 ms with 4).
      val rows = d.run(plan, splits, 2 * spark.sparkContext.defaultParallelism)
      return new IndexTables4SparkDriverScan(
        rows,
        d.schema,
        s"IndexTablesScan $tablePath (version ${snapshot.version}) " +
          s"PushedFilters: [${pushed.mkString(", ")}], ${d.describe}, " +
          s"Splits: ${kept.size}/${files.size}, Tasks: 0"
      )
    }
    val executors = SplitPlacement.live(spark.sparkContext)
    val grouped = SplitGroups.of(
      splits,
      opts.get(IndexTablesConf.SplitsPerTask),
      opts.get(IndexTablesConf.MaxSplitsPerTask),
      spark.sparkContext.defaultParallelism) match {
      // A global aggregate over no split still yields its one row (COUNT 0, not NULL).
      case Seq() if aggregate.exists(_.groupBy.isEmpty) => Seq(SplitGroup(Nil))
      case gs => gs
    }
    val groups = SplitGroups.placed(grouped, executors)
    new IndexTables4SparkScan(plan, groups, files.size, pushed, mixedFilter, snapshot)
  }
}
