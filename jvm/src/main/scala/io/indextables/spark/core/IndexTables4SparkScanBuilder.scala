package io.indextables.spark.core

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownFilters, SupportsPushDownLimit, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{DataType, StructType}

import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.filters.{FiltersToQueryConverter, SplitPruner}
import io.indextables.spark.read.{ReadPlan, SplitInputPartition}
import io.indextables.spark.schema.TableIndexSchema
import io.indextables.spark.transaction.Snapshot
import io.indextables.spark.util.SerializableHadoopConf
import io.indextables.spark.write.TokenLimit

/**
 * Negotiates pushdown for one query on the driver: filters (translated to one native query,
 * plus partition pruning and min/max data skipping), required columns and LIMIT. Filters that
 * are not matched exactly are handed back to Spark, so pushdown never changes an answer.
 */
final class IndexTables4SparkScanBuilder(
    tablePath: String,
    snapshot: Snapshot,
    opts: IndexTablesOptions,
    hadoopOptions: Map[String, String])
  extends ScanBuilder with SupportsPushDownFilters with SupportsPushDownRequiredColumns
  with SupportsPushDownLimit {

  private val tableSchema = DataType.fromJson(snapshot.metadata.schemaString).asInstanceOf[StructType]
  private val indexSchema = TableIndexSchema.resolve(
    tableSchema, snapshot.metadata.partitionColumns,
    IndexTablesOptions(Map.empty, Map.empty, snapshot.metadata.configuration).typemap)

  private var required: StructType = tableSchema
  private var allFilters: Seq[Filter] = Nil
  private var pushed: Seq[Filter] = Nil
  private var query: Option[String] = None
  private var queryWithoutTokens: Option[String] = None
  private var limit: Option[Int] = None

  override def pushFilters(filters: Array[Filter]): Array[Filter] = {
    allFilters = filters.toSeq
    val (partitionOnly, data) = filters.toSeq.partition { f =>
      f.references.nonEmpty && f.references.forall(indexSchema.isPartitionColumn)
    }
    val (q, pushedData, postData) = new FiltersToQueryConverter(indexSchema).translateConjuncts(data)
    query = q.map(_.toQueryAstJson)
    // The same conjuncts without token queries, for splits holding over-long tokens.
    queryWithoutTokens = new FiltersToQueryConverter(indexSchema, tokenQueries = false)
      .translateConjuncts(data)._1.map(_.toQueryAstJson)
    pushed = pushedData ++ partitionOnly
    // Partition filters are exact in pruning, but Spark re-checks them cheaply on the values
    // the reader attaches; data filters come back unless their query was exact.
    (postData ++ partitionOnly).toArray
  }

  override def pushedFilters(): Array[Filter] = pushed.toArray

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  override def pushLimit(n: Int): Boolean = { limit = Some(n); true }

  override def build(): Scan = {
    val spark = SparkSession.active
    val timeZone = spark.sessionState.conf.sessionLocalTimeZone
    val pruner = new SplitPruner(tableSchema, indexSchema.partitionColumns, timeZone,
      opts.get(IndexTablesConf.StatsTruncationMaxLength))
    val files = snapshot.allFiles
    val kept = files.filter(a => pruner.mayMatch(a, allFilters))
    val splits = kept.map { a =>
      SplitInputPartition(a.path, a.partitionValues, a.numRecords, Some(a.size),
        a.footerStartOffset.getOrElse(0L), a.footerEndOffset.getOrElse(0L), snapshot.docMappingFor(a),
        a.splitTags.exists(_.contains(TokenLimit.LongTokensTag)))
    }
    val plan = ReadPlan(
      tablePath = tablePath,
      hadoopConf = new SerializableHadoopConf(spark.sessionState.newHadoopConfWithOptions(hadoopOptions)),
      readSchema = required,
      dataFields = required.fields.toSeq.flatMap(f => indexSchema.field(f.name)),
      partitionSchema = indexSchema.partitionSchema,
      timeZone = timeZone,
      queryAstJson = query,
      queryWithoutTokensJson = queryWithoutTokens,
      limit = limit,
      batchSize = opts.get(IndexTablesConf.ReadBatchSize),
      cacheMaxSize = opts.get(IndexTablesConf.CacheMaxSize))
    new IndexTables4SparkScan(plan, splits, files.size, pushed, snapshot.version)
  }
}
