package io.indextables.spark.read

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownAggregates, SupportsPushDownFilters, SupportsPushDownLimit, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{DataType, StructType}

import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.filters.{FiltersToQueryConverter, IndexQueryParsing, ManifestPruner, MixedBooleanFilter, SplitPruner}
import io.indextables.spark.schema.{TableIndexSchema, TokenLimit}
import io.indextables.spark.transaction.{AddAction, Snapshot}
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

  private val tableSchema =
    DataType.fromJson(snapshot.metadata.schemaString).asInstanceOf[StructType]
  private val indexSchema = IndexTables4SparkScanBuilder.indexSchemaOf(snapshot)

  /** Its native query, exact (see MixedBooleanFilterConverter); parsed once, on the driver. */
  private lazy val mixedQuery: Option[SplitQuery] =
    mixedFilter.flatMap(f => IndexQueryParsing.toQuery(f, indexSchema, snapshot))

  private var required: StructType = tableSchema
  private var allFilters: Seq[Filter] = Nil
  private var pushed: Seq[Filter] = Nil
  private var postFilters: Seq[Filter] = Nil
  // Spark calls pushFilters only when a filter is left for it; the IndexQuery tree may be all.
  private var query: Option[String] = None
  private var queryWithoutTokens: Option[String] = None
  private var filtersPushed = false
  private var limit: Option[Int] = None
  private var aggregate: Option[AggregatePlan] = None

  override def pushFilters(filters: Array[Filter]): Array[Filter] = {
    allFilters = filters.toSeq
    filtersPushed = true
    val (partitionOnly, data) = filters.toSeq.partition { f =>
      f.references.nonEmpty && f.references.forall(indexSchema.isPartitionColumn)
    }
    val (q, pushedData, postData) =
      new FiltersToQueryConverter(indexSchema).translateConjuncts(data)
    query = withMixed(q).map(_.toQueryAstJson)
    // The same conjuncts without token queries, for splits holding over-long tokens. The
    // IndexQuery tree stays as it is: the user's query says what to search.
    queryWithoutTokens = withMixed(new FiltersToQueryConverter(indexSchema, tokenQueries = false)
      .translateConjuncts(data)._1).map(_.toQueryAstJson)
    pushed = pushedData ++ partitionOnly
    // Partition filters are exact in pruning, but Spark re-checks them cheaply on the values
    // the reader attaches; data filters come back unless their query was exact.
    postFilters = postData ++ partitionOnly
    postFilters.toArray
  }

  /**
   * Takes COUNT(*) (optionally grouped; see [[AggregatePlan.of]]) when every split's native query
   * selects exactly the rows Spark would aggregate: no filter left for Spark, and no split that
   * would be read with the token-free query (over-long tokens) while the query has token clauses.
   */
  override def pushAggregation(aggregation: Aggregation): Boolean = {
    if (!filtersPushed) pushFilters(Array.empty)
    val exact =
      postFilters.isEmpty && (query == queryWithoutTokens || !candidates._2.exists(hasLongTokens))
    aggregate = if (exact) AggregatePlan.of(aggregation, indexSchema, tableSchema) else None
    aggregate.isDefined
  }

  /** Spark's translated conjuncts and the IndexQuery tree: both must hold. */
  private def withMixed(q: Option[SplitQuery]): Option[SplitQuery] = (q, mixedQuery) match {
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
  private lazy val candidates: (Seq[AddAction], Seq[AddAction]) = {
    val pruner = new SplitPruner(
      tableSchema,
      indexSchema.partitionColumns,
      timeZone,
      opts.get(IndexTablesConf.StatsTruncationMaxLength))
    val manifestPruner = new ManifestPruner(tableSchema, indexSchema.partitionColumns)
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

  override def build(): Scan = {
    if (!filtersPushed) pushFilters(Array.empty)
    val spark = SparkSession.active
    val (files, kept) = candidates
    val splits = kept.map { a =>
      SplitInputPartition(
        a.path,
        a.partitionValues,
        a.numRecords,
        Some(a.size),
        a.footerStartOffset.getOrElse(0L),
        a.footerEndOffset.getOrElse(0L),
        snapshot.docMappingFor(a),
        hasLongTokens(a)
      )
    }
    val plan = ReadPlan(
      tablePath = tablePath,
      hadoopConf =
        new SerializableHadoopConf(spark.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)),
      readSchema = aggregate.map(_.schema).getOrElse(required),
      dataFields = if (aggregate.isDefined) Nil
      else required.fields.toSeq.flatMap(f => indexSchema.field(f.name)),
      partitionSchema = indexSchema.partitionSchema,
      timeZone = timeZone,
      queryAstJson = query,
      queryWithoutTokensJson = queryWithoutTokens,
      limit = limit,
      batchSize = opts.get(IndexTablesConf.ReadBatchSize),
      cacheMaxSize = opts.get(IndexTablesConf.CacheMaxSize),
      queryCache = opts.get(IndexTablesConf.QueryCacheEnabled),
      aggregate = aggregate
    )
    val groups = SplitGroups.of(
      splits,
      opts.get(IndexTablesConf.SplitsPerTask),
      opts.get(IndexTablesConf.MaxSplitsPerTask),
      spark.sparkContext.defaultParallelism)
    new IndexTables4SparkScan(plan, groups, files.size, pushed, mixedFilter, snapshot)
  }
}

object IndexTables4SparkScanBuilder {

  /** The index schema a snapshot records. */
  def indexSchemaOf(snapshot: Snapshot): TableIndexSchema = {
    val schema = DataType.fromJson(snapshot.metadata.schemaString).asInstanceOf[StructType]
    TableIndexSchema.resolve(
      schema,
      snapshot.metadata.partitionColumns,
      IndexTablesOptions.recordedTypemap(snapshot.metadata.configuration))
  }
}
