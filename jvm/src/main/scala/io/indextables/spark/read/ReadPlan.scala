package io.indextables.spark.read

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.types.StructType

import io.indextables.spark.read.aggregate.AggregatePlan
import io.indextables.spark.schema.IndexedField
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction.DeletionVectorDescriptor
import io.indextables.spark.util.SerializableHadoopConf

/**
 * What every read task of one scan shares. Immutable; built on the driver.
 *
 * @param readSchema     the columns Spark asked for, in its order
 * @param partitionSchema the table's partition columns and their types
 * @param variants       the distinct ways the scan's splits hold the table's columns (their
 *                       doc mappings), each with its own translation of the pushed query; a
 *                       split names its variant
 * @param limit          pushed LIMIT, if any
 * @param queryCache     whether tantivy's leaf-search cache may answer a repeated request (when
 *                       not, each request is made unique: [[LeafCacheBypass]])
 * @param diskCache      the L2 disk cache under tantivy's in-memory cache, if enabled
 * @param aggregate      a pushed aggregation: each split then yields partial rows of
 *                       `aggregate.schema` (which is `readSchema`) instead of documents
 * @param parquetRoot    the root the Parquet files of companion splits are named under (the
 *                       table's, or an external source's), for a companion table
 * @param parquetPathsFromDirectory whether each companion split's manifest names its files
 *                       under their directory, not under `parquetRoot` (see
 *                       `TableLayout.ParquetPathsKey`)
 * @param requireAggregatePushdown whether an aggregate Spark must compute over this scan's
 *                       rows fails planning (`spark.indextables.read.requireAggregatePushdown`)
 * @param metadataColumns the [[MetadataColumns]] the scan reads
 * @param scoring        the table-wide BM25 statistics of the query's text clauses (the JSON of
 *                       a `rank.RankStatistics`), when the scan computes `_score`
 */
final case class ReadPlan(
    tablePath: String,
    hadoopConf: SerializableHadoopConf,
    readSchema: StructType,
    partitionSchema: StructType,
    timeZone: String,
    variants: IndexedSeq[ReadVariant],
    limit: Option[Int],
    batchSize: Int,
    cacheMaxSize: Long,
    queryCache: Boolean,
    aggregate: Option[AggregatePlan] = None,
    requireAggregatePushdown: Boolean = false,
    diskCache: Option[SplitCaches.DiskCache] = None,
    parquetRoot: Option[String] = None,
    parquetPathsFromDirectory: Boolean = false,
    metadataColumns: Set[String] = Set.empty,
    scoring: Option[String] = None) {

  /**
   * The table's root, qualified once per plan in each JVM (qualifying a local or Hadoop path
   * asks its file system, which each split read would otherwise do again).
   */
  @transient private[read] lazy val root: Path =
    LogStore.qualify(new Path(tablePath), hadoopConf.value)

  /** The root companion splits' Parquet files are named under, qualified likewise. */
  @transient private[read] lazy val parquetRootPath: Path =
    parquetRoot.fold(root)(r => LogStore.qualify(new Path(r), hadoopConf.value))
}

/**
 * The pushed query as splits of one doc mapping answer it.
 *
 * @param queryAstJson the query in tantivy4java's query-AST JSON (match-all if None)
 * @param queryWithoutTokensJson the same without token queries on text columns, for splits
 *                     tagged as holding over-long tokens
 * @param dataFields   the columns Spark asked for that these splits store (the others, absent
 *                     or index-only, read as NULL)
 * @param scoreQueryJson the IndexQuery tree alone, whose text clauses `_score` ranks by
 */
final case class ReadVariant(
    queryAstJson: Option[String],
    queryWithoutTokensJson: Option[String],
    dataFields: Seq[IndexedField],
    scoreQueryJson: Option[String] = None)

/**
 * One split to read, with what the log knows of it, and its [[ReadVariant]] (an index).
 *
 * @param companionFiles the Parquet files holding the split's rows (companion layout), relative
 *                to the plan's parquetRoot
 * @param companionSizes the byte size each of `companionFiles` was indexed at, where recorded
 * @param keyMins the log's minimum of each string column a pushed aggregation groups by (none
 *                for other reads): it tells whether a sentinel key is free for NULLs
 * @param deletionVector the split's deleted docs, which every read leaves out
 * @param ranked  for a pushed top-k by `_score`, the split's winners: only they are read, in
 *                their order, without a search
 */
final case class SplitInputPartition(
    path: String,
    partitionValues: Map[String, String],
    numRecords: Option[Long],
    size: Option[Long],
    footerStartOffset: Long,
    footerEndOffset: Long,
    docMappingJson: Option[String],
    hasLongTokens: Boolean,
    variant: Int = 0,
    keyMins: Map[String, String] = Map.empty,
    companionFiles: Seq[String] = Nil,
    companionSizes: Map[String, Long] = Map.empty,
    deletionVector: Option[DeletionVectorDescriptor] = None,
    ranked: Option[RankedHits] = None) {

  /** Whether the split's rows live in Parquet files (the companion layout). */
  def companion: Boolean = companionFiles.nonEmpty
}
