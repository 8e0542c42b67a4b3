package io.indextables.spark.core

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{MetadataColumn, SupportsDeleteV2, SupportsMetadataColumns, SupportsRead, SupportsRowLevelOperations, SupportsWrite, Table, TableCapability}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.expressions.{Expressions, Transform}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, RowLevelOperationBuilder, RowLevelOperationInfo, WriteBuilder}
import org.apache.spark.sql.indextables.SparkCatalogBridge
import org.apache.spark.sql.sources.{AlwaysTrue, Filter}
import org.apache.spark.sql.streaming.OutputMode
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.filters.{IndexQueryRegistry, SplitPruner}
import io.indextables.spark.read.{IndexTables4SparkScanBuilder, MetadataColumns}
import io.indextables.spark.schema.{TableIndexing, TableIndexSchema}
import io.indextables.spark.transaction.{SchemaHash, Snapshot, StreamingTxn, TableLayout}
import io.indextables.spark.util.NativeLibrary
import io.indextables.spark.write.{DeletionCommit, IndexTables4SparkWriteBuilder, StreamingBatch}

/**
 * An IndexTables table at a path. Reads see the latest committed version; writes append or
 * replace it in one log commit. Created on the driver per query; not shared between threads.
 *
 * @param properties        the options the table was resolved with (`path`, file-system keys)
 * @param catalogEntry      the name and properties the catalog gives a table it names
 * @param definedProperties the table properties of a CREATE or REPLACE TABLE: the table-property
 *                          layer of the write that creates or replaces the table, which records
 *                          them in its metadata (see write.CommitActions)
 */
class IndexTables4SparkTable(
    val tablePath: String,
    tableSchema: StructType,
    val requestedPartitionColumns: Seq[String],
    properties: Map[String, String],
    acceptsWrites: Boolean = false,
    knownSnapshot: Option[Option[Snapshot]] = None,
    val catalogEntry: Option[CatalogEntry] = None,
    val definedProperties: Map[String, String] = Map.empty,
    schemaEvolution: Boolean = true,
    streamingBatch: Option[StreamingBatch] = None)
    extends Table with SupportsRead with SupportsWrite with SupportsMetadataColumns
    with SupportsRowLevelOperations with SupportsDeleteV2 {

  // Filters, searches and commands on the driver use tantivy4java from here on.
  NativeLibrary.ensureLoaded()

  /**
   * The table's latest snapshot when it was resolved (given by the provider when it read the
   * log already), or None when nothing has been committed at the path.
   */
  lazy val existingSnapshot: Option[Snapshot] =
    knownSnapshot.getOrElse(TableLogResolver.load(tablePath, properties))

  /** How the latest version indexes each column; the table must exist. */
  def indexSchema: TableIndexSchema = TableIndexing.ofTable(
    existingSnapshot.getOrElse(throw IndexTablesErrors.tableNotFound(tablePath)))

  override def name(): String = catalogEntry.map(_.name).getOrElse(s"indextables.`$tablePath`")

  override def schema(): StructType = tableSchema

  /** Where each row lives: `_split` and `_doc` ([[MetadataColumns]]). */
  override def metadataColumns(): Array[MetadataColumn] = MetadataColumns.All

  override def partitioning(): Array[Transform] =
    requestedPartitionColumns.map(c => Expressions.identity(c): Transform).toArray

  /**
   * A path table's options; a catalog table's properties as DESCRIBE TABLE EXTENDED and SHOW
   * TBLPROPERTIES show them: those the table records in its metadata (the schema registry
   * aside) and the catalog's (provider, location, owner, external).
   */
  override def properties(): util.Map[String, String] = catalogEntry match {
    case None => properties.asJava
    case Some(entry) =>
      val recorded = existingSnapshot.map(_.metadata.configuration).getOrElse(Map.empty)
        .filterNot(p =>
          p._1.startsWith(SchemaHash.RegistryKeyPrefix) ||
            StreamingTxn.isRecordKey(p._1))
      (recorded ++ entry.properties).asJava
  }

  override def capabilities(): util.Set[TableCapability] =
    if (!acceptsWrites) IndexTables4SparkTable.PathCapabilities
    else if (schemaEvolution) IndexTables4SparkTable.WriteCapabilities
    else IndexTables4SparkTable.RowLevelCapabilities

  /**
   * This table for an UPDATE or MERGE: without ACCEPT_ANY_SCHEMA, under which Spark would leave
   * the statement's columns unresolved (it takes such a table to define its schema by the
   * write), so that Spark resolves and aligns the assignments against the table's columns.
   */
  def forRowLevelCommand: IndexTables4SparkTable =
    new IndexTables4SparkTable(
      tablePath,
      tableSchema,
      requestedPartitionColumns,
      properties,
      acceptsWrites,
      Some(existingSnapshot),
      catalogEntry,
      definedProperties,
      schemaEvolution = false
    )

  /** Whether Spark skips schema resolution for it (see [[forRowLevelCommand]]). */
  def acceptsAnySchema: Boolean = capabilities().contains(TableCapability.ACCEPT_ANY_SCHEMA)

  /** Options for this read or write, over session conf and the table's recorded properties. */
  def resolvedOptions(options: Map[String, String]): IndexTablesOptions =
    IndexTablesOptions(
      properties ++ options,
      TableLogResolver.sessionConf(SparkSession.active),
      existingSnapshot.map(_.metadata.configuration).getOrElse(Map.empty) ++ definedProperties
    )

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = {
    val all = properties ++ options.asCaseSensitiveMap().asScala.toMap
    // versionAsOf / timestampAsOf pick an earlier snapshot; the plain read is the latest.
    val snap = TableLogResolver.loadForRead(tablePath, all)
      .getOrElse(throw IndexTablesErrors.tableNotFound(tablePath))
    scanBuilderAt(options, snap)
  }

  /** A scan builder over `snap`, a version of this table, with the read's `options`. */
  def scanBuilderAt(options: CaseInsensitiveStringMap, snap: Snapshot): ScanBuilder = {
    val readOptions = options.asCaseSensitiveMap().asScala.toMap
    val all = properties ++ readOptions
    // The IndexQuery tree the Catalyst rule planned for this very relation, if it tagged it.
    val indexQuery = IndexQueryRegistry.keyIn(readOptions).map { key =>
      IndexQueryRegistry.lookup(key).getOrElse(throw IndexTablesErrors.indexQueryLost(tablePath))
    }
    // Time travel: the latest snapshot tells a purged file from one lost otherwise.
    val timeTravel = all.keys.exists { k =>
      k.equalsIgnoreCase("versionAsOf") || k.equalsIgnoreCase("timestampAsOf")
    }
    val latest = if (!timeTravel) None
    else TableLogResolver.load(tablePath, all).filter(_.version != snap.version)
    new IndexTables4SparkScanBuilder(
      tablePath,
      snap,
      resolvedOptions(readOptions),
      indexQuery,
      latest)
  }

  /**
   * DELETE, UPDATE and MERGE through Spark's row-level operations: the rows they change get
   * deletion vectors, and updated and inserted rows go to new splits (see
   * [[IndexTablesRowLevelOperation]]).
   */
  override def newRowLevelOperationBuilder(info: RowLevelOperationInfo)
      : RowLevelOperationBuilder = {
    val command = info.command()
    val log = TableLogResolver.log(tablePath, properties)
    val base = log.snapshot()
    // An index over Parquet files it does not own changes only with them.
    TableLayout.checkWritable(base, name())
    () => new IndexTablesRowLevelOperation(this, log, base, command)
  }

  /**
   * The result of the DELETE this table ran from the log alone ([[deleteWhere]]), for the
   * statement's count row; None until it runs.
   */
  @volatile private[spark] var metadataDelete: Option[DeletionCommit.Result] = None

  /**
   * Whether a DELETE with `predicates` needs no row read: the log decides every live split, by
   * its partition values (all of its rows match) or by them and its statistics (none can).
   * Spark then calls [[deleteWhere]] instead of planning a row-level DELETE. Not for an index of
   * another table's files (its row-level builder refuses every change, naming the source).
   */
  override def canDeleteWhere(predicates: Array[Predicate]): Boolean =
    existingSnapshot.exists { snap =>
      !snap.metadata.configuration.contains(TableLayout.SourceTablePathKey) &&
      v1Filters(predicates).exists(DeletionCommit.wholeSplits(snap, pruner(snap), _).isDefined)
    }

  /** Removes the splits a DELETE with `predicates` deletes whole ([[canDeleteWhere]]). */
  override def deleteWhere(predicates: Array[Predicate]): Unit = {
    val filters = v1Filters(predicates).getOrElse(
      throw IndexTablesErrors.internalError(s"untranslatable DELETE ${predicates.mkString(", ")}"))
    val log = TableLogResolver.log(tablePath, properties)
    val base = log.snapshot()
    metadataDelete = Some(DeletionCommit.commitWholeSplits(
      log,
      base,
      name(),
      pruner(base),
      filters,
      if (predicates.isEmpty) "true" else predicates.mkString(" AND ")))
  }

  /** `predicates` as Spark's V1 filters (AlwaysTrue left out), when each one translates. */
  private def v1Filters(predicates: Array[Predicate]): Option[Seq[Filter]] = {
    val filters = predicates.toSeq.flatMap(SparkCatalogBridge.toV1)
    if (filters.size != predicates.length) None else Some(filters.filterNot(_ == AlwaysTrue))
  }

  private def pruner(snap: Snapshot): SplitPruner = new SplitPruner(
    TableIndexing.tableSchema(snap),
    snap.metadata.partitionColumns,
    SparkSession.active.sessionState.conf.sessionLocalTimeZone,
    resolvedOptions(Map.empty).get(IndexTablesConf.StatsTruncationMaxLength)
  )

  /**
   * Refuses, as a streaming query into this table starts, what its batches could not do: an
   * output mode other than append and complete (`update` would need a merge by key), and an
   * unknown `spark.indextables.*` option of a path sink (a catalog table's stream is given its
   * options by Spark only with each batch, whose planning checks them as a batch write's).
   */
  def checkStreamingSink(outputMode: OutputMode): Unit = {
    if (outputMode != OutputMode.Append() && outputMode != OutputMode.Complete())
      throw IndexTablesErrors.streamingOutputModeUnsupported(name(), outputMode.toString)
    if (catalogEntry.isEmpty)
      IndexTablesOptions.checkWriteOptions(properties, resolvedOptions(Map.empty))
  }

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new IndexTables4SparkWriteBuilder(
      name(),
      tablePath,
      requestedPartitionColumns,
      existingSnapshot,
      resolvedOptions,
      info,
      definedProperties,
      streamingBatch)
}

/**
 * What the catalog knows of a table it names.
 *
 * @param name       its name, as Spark shows it (`spark_catalog.default.logs`)
 * @param properties the catalog's own properties of it (provider, location, owner, external)
 */
final case class CatalogEntry(name: String, properties: Map[String, String])

object IndexTables4SparkTable {

  /**
   * A path table's: reads, batch and streaming, are V2. Writes take the V1 routes, so that
   * Spark hands over the partitionBy columns: batch saves `createRelation`, streams
   * (`writeStream.start(path)`) `createSink` (see IndexTables4SparkTableProvider).
   */
  val PathCapabilities: util.Set[TableCapability] = Set(
    TableCapability.BATCH_READ,
    TableCapability.MICRO_BATCH_READ).asJava

  /**
   * Only for the table objects the save path and the catalog build (see
   * IndexTables4SparkTableProvider and catalog.IndexTables4SparkCatalog).
   */
  val WriteCapabilities: util.Set[TableCapability] = Set(
    TableCapability.BATCH_READ,
    TableCapability.MICRO_BATCH_READ,
    TableCapability.BATCH_WRITE,
    TableCapability.STREAMING_WRITE,
    TableCapability.TRUNCATE,
    TableCapability.OVERWRITE_BY_FILTER,
    TableCapability.OVERWRITE_DYNAMIC,
    TableCapability.ACCEPT_ANY_SCHEMA
  ).asJava

  /** An UPDATE's or MERGE's target: a table whose schema the statement must fit. */
  val RowLevelCapabilities: util.Set[TableCapability] = Set(
    TableCapability.BATCH_READ,
    TableCapability.BATCH_WRITE
  ).asJava
}
