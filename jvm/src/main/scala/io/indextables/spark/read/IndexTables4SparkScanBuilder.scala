package io.indextables.spark.core

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownAggregates, SupportsPushDownFilters, SupportsPushDownLimit, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{DataType, StructType}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.filters.{FiltersToQueryConverter, IndexQueryParsing, ManifestPruner, MixedBooleanFilter, SplitPruner}
import io.indextables.spark.read.{AggregatePlan, ReadPlan, SplitInputPartition}
import io.indextables.spark.schema.TableIndexSchema
import io.indextables.spark.transaction.{AddAction, Snapshot}
import io.indextables.spark.util.SerializableHadoopConf
import io.indextables.spark.write.TokenLimit
import io.indextables.tantivy4java.split.{SplitBooleanQuery, SplitQuery}

/**
 * Negotiates pushdown for one query on the driver: filters (translated to one native query,
 * plus partition pruning and min/max data skipping), required columns, LIMIT and COUNT(*)
 * aggregates. Filters that are not matched exactly are handed back to Spark, so pushdown never
 * changes an answer; an aggregate is taken only when the native query is exactly the filter.
 */
final class IndexTables4SparkScanBuilder(
    tablePath: String,
    snapshot: Snapshot,
    opts: IndexTablesOptions,
    hadoopOptions: Map[String, String])
  extends ScanBuilder with SupportsPushDownFilters with SupportsPushDownRequiredColumns
  with SupportsPushDownLimit with SupportsPushDownAggregates {

  private val tableSchema = DataType.fromJson(snapshot.metadata.schemaString).asInstanceOf[StructType]
  private val indexSchema = IndexTables4SparkScanBuilder.indexSchemaOf(snapshot)

  /** The IndexQuery tree V2IndexQueryExpressionRule stored for this relation, if any. */
  private val mixedFilter: Option[MixedBooleanFilter] =
    hadoopOptions.get(IndexTables4SparkScanBuilder.FilterKeyOption).map { key =>
      IndexTables4SparkScanBuilder.filtersFor(key).getOrElse(throw IndexTablesErrors.indexQueryLost(tablePath))
    }
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
    val (q, pushedData, postData) = new FiltersToQueryConverter(indexSchema).translateConjuncts(data)
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
    val exact = postFilters.isEmpty && (query == queryWithoutTokens || !candidates._2.exists(hasLongTokens))
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
    val pruner = new SplitPruner(tableSchema, indexSchema.partitionColumns, timeZone,
      opts.get(IndexTablesConf.StatsTruncationMaxLength))
    val manifestPruner = new ManifestPruner(tableSchema, indexSchema.partitionColumns)
    val files = snapshot.filesMatching(bounds => manifestPruner.mayMatch(bounds, allFilters),
      values => pruner.mayMatchPartition(values, allFilters))
    (files, files.filter(a => pruner.mayMatch(a, allFilters)))
  }

  private def hasLongTokens(a: AddAction): Boolean = a.splitTags.exists(_.contains(TokenLimit.LongTokensTag))

  override def build(): Scan = {
    if (!filtersPushed) pushFilters(Array.empty)
    val spark = SparkSession.active
    val (files, kept) = candidates
    val splits = kept.map { a =>
      SplitInputPartition(a.path, a.partitionValues, a.numRecords, Some(a.size),
        a.footerStartOffset.getOrElse(0L), a.footerEndOffset.getOrElse(0L), snapshot.docMappingFor(a),
        hasLongTokens(a))
    }
    val plan = ReadPlan(
      tablePath = tablePath,
      hadoopConf = new SerializableHadoopConf(spark.sessionState.newHadoopConfWithOptions(hadoopOptions)),
      readSchema = aggregate.map(_.schema).getOrElse(required),
      dataFields = if (aggregate.isDefined) Nil else required.fields.toSeq.flatMap(f => indexSchema.field(f.name)),
      partitionSchema = indexSchema.partitionSchema,
      timeZone = timeZone,
      queryAstJson = query,
      queryWithoutTokensJson = queryWithoutTokens,
      limit = limit,
      batchSize = opts.get(IndexTablesConf.ReadBatchSize),
      cacheMaxSize = opts.get(IndexTablesConf.CacheMaxSize),
      aggregate = aggregate)
    new IndexTables4SparkScan(plan, splits, files.size, pushed, mixedFilter, snapshot.version)
  }
}

/**
 * The side channel between V2IndexQueryExpressionRule and the scan builder (Spark's pushdown API
 * carries only its own filter types). The optimizer rule stores a relation's IndexQuery tree here
 * under a fresh random key and tags the relation with it in the option [[FilterKeyOption]];
 * `newScanBuilder` receives the relation's options, so the builder of exactly that relation
 * finds exactly that tree, also in joins and self-joins, whatever thread plans it.
 *  - The map is weak: its key is the very String held in the relation's options, so an entry
 *    lives as long as the plan that holds the relation, and the GC drops it afterwards.
 *  - The ThreadLocal records the relation the planning thread's resolution check last resolved
 *    to, for diagnostics; concurrent queries never share a key, so they never see each other's
 *    trees. Thread-safe.
 */
object IndexTables4SparkScanBuilder {
  val FilterKeyOption = "__indextables.indexquery.key"

  private val currentRelation = new ThreadLocal[Option[AnyRef]] {
    override def initialValue(): Option[AnyRef] = None
  }
  private val customFilters = new java.util.WeakHashMap[String, MixedBooleanFilter]()

  def setCurrentRelation(relation: AnyRef): Unit = currentRelation.set(Some(relation))

  def getCurrentRelation: Option[AnyRef] = currentRelation.get()

  def newFilterKey(): String = new String(java.util.UUID.randomUUID().toString)

  /** Stores `filter` for the relation tagged with `key`; `key` must be its option value. */
  def storeFilters(relation: AnyRef, key: String, filter: MixedBooleanFilter): Unit = {
    currentRelation.set(Some(relation))
    customFilters.synchronized(customFilters.put(key, filter))
  }

  def filtersFor(key: String): Option[MixedBooleanFilter] =
    customFilters.synchronized(Option(customFilters.get(key)))

  /** The index schema a snapshot records. */
  def indexSchemaOf(snapshot: Snapshot): TableIndexSchema = {
    val schema = DataType.fromJson(snapshot.metadata.schemaString).asInstanceOf[StructType]
    TableIndexSchema.resolve(schema, snapshot.metadata.partitionColumns,
      IndexTablesOptions(Map.empty, Map.empty, snapshot.metadata.configuration).typemap)
  }

  /** The index schema of a table, which must exist. */
  def indexSchemaOf(table: IndexTables4SparkTable): TableIndexSchema =
    indexSchemaOf(table.existingSnapshot.getOrElse(throw IndexTablesErrors.notATable(table.tablePath)))
}
