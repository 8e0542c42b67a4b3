package io.indextables.spark.catalog

import java.util
import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.{NoSuchTableException, TableAlreadyExistsException}
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType}
import org.apache.spark.sql.connector.catalog.{Column, DelegatingCatalogExtension, Identifier, StagedTable, StagingTableCatalog, SupportsWrite, Table, TableCapability, TableCatalog, TableChange}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, WriteBuilder}
import org.apache.spark.sql.indextables.{SessionCatalogEntry, SparkCatalogBridge, SparkLineShim, SparkWriteBridge}
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.core.{CatalogEntry, IndexTables4SparkTable, IndexTables4SparkTableProvider, IndexTables4SparkTableSource, TableLogResolver}
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction.TransactionLog
import io.indextables.spark.transaction.Snapshot

/**
 * The session catalog with IndexTables tables, as Delta's `DeltaCatalog` is for Delta: set its
 * Java front, [[IndexTables4SparkCatalog]], as `spark.sql.catalog.spark_catalog`
 * (`indextables.configure_spark` does, unless another catalog is set there). It wraps the session catalog (in-memory, or Hive's metastore) and:
 *  - keeps tables `USING indextables` in it: `CREATE TABLE` (with columns it writes the table's
 *    first version; without, it registers the table already at its `LOCATION`),
 *    `CREATE TABLE ... AS SELECT`, `REPLACE TABLE [AS SELECT]` and `saveAsTable` (staged:
 *    the table is registered, or replaced, only once its data is committed), `DROP TABLE`
 *    (a managed table's files are deleted, an external table's kept), `ALTER TABLE SET/UNSET
 *    TBLPROPERTIES` (a metadata commit), and time travel (`VERSION AS OF`, `TIMESTAMP AS OF`);
 *  - loads them as IndexTables tables, so reads, `indexquery`, INSERT and DataSource V2 writes,
 *    and the SQL commands work on their names;
 *  - resolves `indextables.`/path/to/table`` to the table at that path (reads, SQL, writes).
 * The catalog entry holds the table's identity and location only; its schema, partitioning and
 * properties are read from its transaction log, which stays the one source of truth.
 * Every other name and provider goes to the session catalog it wraps.
 */
class IndexTables4SparkCatalogImpl extends DelegatingCatalogExtension with StagingTableCatalog {
  import IndexTables4SparkCatalogImpl._

  private def spark: SparkSession = SparkSession.active

  override def loadTable(ident: Identifier): Table =
    pathOf(ident) match {
      case Some(path) => pathTable(path)
      case None => withCatalogEntry(super.loadTable(ident), Map.empty)
    }

  override def loadTable(ident: Identifier, version: String): Table =
    timeTravel(ident, "versionAsOf" -> version, super.loadTable(ident, version))

  override def loadTable(ident: Identifier, timestamp: Long): Table =
    // Spark gives microseconds; the option takes epoch milliseconds.
    timeTravel(
      ident,
      "timestampAsOf" -> Math.floorDiv(timestamp, 1000L).toString,
      super.loadTable(ident, timestamp))

  /** The version of an IndexTables table that `option` picks (read-only); else `other`. */
  private def timeTravel(ident: Identifier, option: (String, String), other: => Table): Table =
    pathOf(ident).orElse(indexTablesEntry(ident).map(locationOf)) match {
      case None => other
      case Some(path) =>
        val options = Map("path" -> path, option)
        val snap = TableLogResolver.loadForRead(path, options)
          .getOrElse(throw IndexTablesErrors.tableNotFound(path))
        new IndexTables4SparkTable(
          path,
          schemaOf(snap),
          snap.metadata.partitionColumns,
          options,
          knownSnapshot = Some(Some(snap)))
    }

  override def tableExists(ident: Identifier): Boolean =
    pathOf(ident) match {
      case Some(path) => TableLogResolver.load(path, Map("path" -> path)).isDefined
      case None => super.tableExists(ident)
    }

  // ------------------------------------------------------------------------------------------
  // CREATE TABLE

  override def createTable(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]): Table =
    createTable(ident, SparkCatalogBridge.structType(columns), partitions, properties)

  override def createTable(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]): Table = {
    if (!isIndexTables(properties)) return super.createTable(ident, schema, partitions, properties)
    val d = definition(ident, schema, partitions, properties)
    if (d.registered && super.tableExists(ident)) throw new TableAlreadyExistsException(ident)
    TableLogResolver.load(d.location, d.options) match {
      case Some(_) if d.managed || !d.registered =>
        // A CREATE TABLE never writes over a table; only an external entry may register one.
        throw IndexTablesErrors.catalogLocationHasTable(d.name, d.location)
      case Some(snap) =>
        val existing = schemaOf(snap)
        if (schema.nonEmpty && !sameColumns(schema, existing))
          throw IndexTablesErrors.catalogSchemaMismatch(d.name, d.location, schema, existing)
      case None =>
        if (schema.isEmpty) throw IndexTablesErrors.catalogSchemaRequired(d.name, d.location)
        new StagedIndexTable(d, existing = None, register = false).commitStagedChanges()
    }
    register(d)
    loadTable(ident)
  }

  // ------------------------------------------------------------------------------------------
  // CREATE TABLE AS SELECT, REPLACE TABLE [AS SELECT], saveAsTable: staged

  override def stageCreate(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable = {
    if (!isIndexTables(properties))
      return new DelegatedStagedTable(
        this,
        ident,
        super.createTable(ident, schema, partitions, properties))
    val d = definition(ident, schema, partitions, properties)
    if (d.registered && super.tableExists(ident)) throw new TableAlreadyExistsException(ident)
    if (TableLogResolver.load(d.location, d.options).isDefined)
      throw IndexTablesErrors.catalogLocationHasTable(d.name, d.location)
    new StagedIndexTable(d, existing = None, register = d.registered)
  }

  override def stageReplace(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable = {
    if (!tableExists(ident)) throw new NoSuchTableException(ident)
    stageCreateOrReplace(ident, schema, partitions, properties)
  }

  override def stageCreateOrReplace(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable = {
    if (!isIndexTables(properties)) {
      if (tableExists(ident)) dropTable(ident)
      return new DelegatedStagedTable(
        this,
        ident,
        super.createTable(ident, schema, partitions, properties))
    }
    val entry = indexTablesEntry(ident)
    if (entry.isEmpty && pathOf(ident).isEmpty && super.tableExists(ident)) {
      // Another provider's table of that name: replaced as Spark replaces one, drop then create.
      dropTable(ident)
    }
    val asked = definition(ident, schema, partitions, properties)
    val d = entry match {
      case Some(ct) =>
        val location = locationOf(ct)
        if (properties.containsKey(TableCatalog.PROP_LOCATION) && asked.location != location)
          throw IndexTablesErrors.replaceTableLocation(asked.name, location, asked.location)
        asked.copy(location = location, managed = ct.tableType == CatalogTableType.MANAGED)
      case None => asked
    }
    val current = TableLogResolver.load(d.location, d.options)
    new StagedIndexTable(d, existing = current, register = d.registered && entry.isEmpty)
  }

  /**
   * A table staged by CTAS, REPLACE TABLE or saveAsTable. Spark writes the query's rows into it
   * (an append for a new table, a whole-table overwrite of an existing one: one commit either
   * way, so a failed query leaves the table as it was), then commits it: a table nothing was
   * written to gets its empty version, and a new table its catalog entry.
   */
  private final class StagedIndexTable(
      d: Definition,
      existing: Option[Snapshot],
      register: Boolean)
      extends IndexTables4SparkTable(
        d.location,
        d.schema,
        d.partitionColumns,
        d.options,
        acceptsWrites = true,
        knownSnapshot = Some(existing),
        definedProperties = d.properties)
      with StagedTable {
    private var written = false

    override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = {
      written = true
      val builder = super.newWriteBuilder(info)
      if (existing.isDefined) builder.asInstanceOf[SupportsTruncate].truncate() else builder
    }

    override def commitStagedChanges(): Unit = {
      if (!written) {
        // No query: the table's first version (or a whole-table overwrite) with no rows.
        val empty = spark.createDataFrame(util.Collections.emptyList[Row](), d.schema)
        SparkWriteBridge.write(spark, this, empty, overwrite = existing.isDefined, Map.empty)
      }
      if (register) IndexTables4SparkCatalogImpl.this.register(d)
    }

    override def abortStagedChanges(): Unit = ()
  }

  // ------------------------------------------------------------------------------------------
  // DROP, ALTER

  override def dropTable(ident: Identifier): Boolean = dropped(ident, super.dropTable(ident))

  override def purgeTable(ident: Identifier): Boolean = dropped(ident, super.purgeTable(ident))

  /** Drops the entry (`drop`); then deletes a managed IndexTables table's files. */
  private def dropped(ident: Identifier, drop: => Boolean): Boolean = {
    val managed = indexTablesEntry(ident).filter(_.tableType == CatalogTableType.MANAGED)
    val result = drop
    managed.foreach(ct => deleteFiles(locationOf(ct)))
    result
  }

  /** Every file of the table at `location`, deleted through its LogStore. */
  private def deleteFiles(location: String): Unit = {
    val options = TableLogResolver.settings(Map("path" -> location))
    val root = new Path(location)
    val store =
      LogStore.forPath(root, spark.sessionState.newHadoopConfWithOptions(options.hadoopOptions))
    if (store.exists(root) || store.list(root).nonEmpty)
      store.listRecursively(root).foreach(f => store.delete(f.path))
    // A table created again at the same location must not be read from the dropped one's state.
    TransactionLog.invalidate(
      location,
      spark.sessionState.newHadoopConfWithOptions(options.hadoopOptions))
    ()
  }

  override def alterTable(ident: Identifier, changes: TableChange*): Table =
    loadTable(ident) match {
      case t: IndexTables4SparkTable =>
        TableProperties.alter(t.name(), t.tablePath, changes)
        loadTable(ident)
      case _ => super.alterTable(ident, changes: _*)
    }

  // ------------------------------------------------------------------------------------------
  // Catalog entries

  /** The catalog entry of `ident` when it is an IndexTables table of the session catalog. */
  private def indexTablesEntry(ident: Identifier): Option[CatalogTable] =
    if (pathOf(ident).isDefined) None
    else Try(super.loadTable(ident)).toOption.flatMap(SparkCatalogBridge.v1CatalogTable)
      .filter(ct => isIndexTablesProvider(ct.provider))

  /** `table`, as an IndexTables table when the session catalog holds it as one. */
  private def withCatalogEntry(table: Table, options: Map[String, String]): Table =
    SparkCatalogBridge.v1CatalogTable(table) match {
      case Some(ct) if isIndexTablesProvider(ct.provider) =>
        val path = locationOf(ct)
        val opts = ct.storage.properties ++ options + ("path" -> path)
        val snap = TableLogResolver.loadExisting(path, opts)
        new IndexTables4SparkTable(
          path,
          schemaOf(snap),
          snap.metadata.partitionColumns,
          opts,
          acceptsWrites = true,
          knownSnapshot = Some(Some(snap)),
          catalogEntry = Some(entryOf(ct, path)))
      case _ => table
    }

  private def entryOf(ct: CatalogTable, path: String): CatalogEntry = {
    val name = (Seq(this.name()) ++ ct.identifier.database.toSeq :+ ct.identifier.table)
      .mkString(".")
    CatalogEntry(
      name,
      Map(
        TableCatalog.PROP_PROVIDER -> IndexTables4SparkTableSource.ShortName,
        TableCatalog.PROP_LOCATION -> path) ++
        Option(ct.owner).filter(_.nonEmpty).map(TableCatalog.PROP_OWNER -> _) ++
        ct.comment.map(TableCatalog.PROP_COMMENT -> _) ++
        (if (ct.tableType == CatalogTableType.EXTERNAL) Some(TableCatalog.PROP_EXTERNAL -> "true")
         else None)
    )
  }

  /** What a CREATE or REPLACE TABLE asks for, with its location resolved. */
  private def definition(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]): Definition = {
    val props = properties.asScala.toMap
    val partitionColumns = partitions.toSeq.map {
      case t if t.name() == "identity" && t.references().length == 1 =>
        t.references().head.fieldNames().mkString(".")
      case t => throw IndexTablesErrors.unsupportedPartitioning(t.toString)
    }
    val name = (Seq(this.name()) ++ ident.namespace() :+ ident.name()).mkString(".")
    val requested = props.get(TableCatalog.PROP_LOCATION)
    val location = pathOf(ident).orElse(requested).map(qualified).getOrElse {
      val db = ident.namespace().lastOption.getOrElse(spark.sessionState.catalog.getCurrentDatabase)
      new Path(spark.sessionState.catalog.defaultTablePath(TableIdentifier(ident.name(), Some(db))))
        .toString
    }
    Definition(
      ident,
      name,
      schema,
      partitionColumns,
      location,
      managed = requested.isEmpty && pathOf(ident).isEmpty,
      registered = pathOf(ident).isEmpty,
      properties = TableProperties.defined(name, props),
      comment = props.get(TableCatalog.PROP_COMMENT)
    )
  }

  private def qualified(location: String): String = {
    val path = new Path(location)
    LogStore.qualify(path, spark.sessionState.newHadoopConf()).toString
  }

  /** Adds the table's entry to the session catalog: its identity and location only. */
  private def register(d: Definition): Unit = {
    val db = d.ident.namespace().lastOption.getOrElse(spark.sessionState.catalog.getCurrentDatabase)
    val entry = SparkLineShim.catalogTable(SessionCatalogEntry(
      TableIdentifier(d.ident.name(), Some(db)),
      if (d.managed) CatalogTableType.MANAGED else CatalogTableType.EXTERNAL,
      new Path(d.location).toUri,
      IndexTables4SparkTableSource.ShortName,
      d.comment
    ))
    spark.sessionState.catalog.createTable(entry, ignoreIfExists = false, validateLocation = false)
  }
}

/** A staged table of another provider: created at once, dropped again on abort (Spark's way). */
private final class DelegatedStagedTable(
    catalog: TableCatalog,
    ident: Identifier,
    table: Table)
    extends StagedTable with SupportsWrite {
  override def name(): String = table.name()
  override def columns(): Array[Column] = table.columns()
  override def schema(): StructType = SparkCatalogBridge.structType(table.columns())
  override def partitioning(): Array[Transform] = table.partitioning()
  override def properties(): util.Map[String, String] = table.properties()
  override def capabilities(): util.Set[TableCapability] = table.capabilities()
  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = table match {
    case w: SupportsWrite => w.newWriteBuilder(info)
    case _ =>
      throw IndexTablesErrors.internalError(s"table ${table.name()} does not accept writes")
  }
  override def commitStagedChanges(): Unit = ()
  override def abortStagedChanges(): Unit = { catalog.dropTable(ident); () }
}

/**
 * A CREATE or REPLACE TABLE, resolved.
 *
 * @param managed    whether the catalog owns the files (no LOCATION given)
 * @param registered whether the table gets a catalog entry (not for `indextables.`/path``)
 * @param properties the table properties to record (TBLPROPERTIES and OPTIONS)
 */
private final case class Definition(
    ident: Identifier,
    name: String,
    schema: StructType,
    partitionColumns: Seq[String],
    location: String,
    managed: Boolean,
    registered: Boolean,
    properties: Map[String, String],
    comment: Option[String]) {
  def options: Map[String, String] = Map("path" -> location)
}

object IndexTables4SparkCatalogImpl {

  /** The path that `indextables.`<absolute path>`` names, if `ident` is one. */
  def pathOf(ident: Identifier): Option[String] = ident.namespace() match {
    case Array(ns)
        if ns.equalsIgnoreCase(IndexTables4SparkTableSource.ShortName) &&
          new Path(ident.name()).isAbsolute => Some(ident.name())
    case _ => None
  }

  /** Whether a CREATE TABLE's provider is IndexTables (by short name or by class). */
  private def isIndexTables(properties: util.Map[String, String]): Boolean =
    isIndexTablesProvider(Option(properties.get(TableCatalog.PROP_PROVIDER)))

  private def isIndexTablesProvider(provider: Option[String]): Boolean = provider.exists { p =>
    p.equalsIgnoreCase(IndexTables4SparkTableSource.ShortName) ||
    Try(Class.forName(p, false, getClass.getClassLoader)).toOption
      .exists(classOf[IndexTables4SparkTableProvider].isAssignableFrom)
  }

  /** The same columns (names ignoring case, types ignoring nullability), in the same order. */
  private def sameColumns(a: StructType, b: StructType): Boolean =
    a.fieldNames.map(_.toLowerCase(Locale.ROOT)).sameElements(
      b.fieldNames.map(_.toLowerCase(Locale.ROOT))) &&
      DataType.equalsStructurally(a, b, ignoreNullability = true)

  private def locationOf(ct: CatalogTable): String = new Path(ct.location).toString

  private def schemaOf(snap: Snapshot): StructType =
    DataType.fromJson(snap.metadata.schemaString).asInstanceOf[StructType]

  /**
   * The table at `path`. A path without one fails naming it (INDEXTABLES_TABLE_NOT_FOUND):
   * Spark would otherwise go on to try the name as a query on files and report that instead.
   */
  private def pathTable(path: String): Table = {
    val options = Map("path" -> path)
    val snap = TableLogResolver.loadExisting(path, options)
    new IndexTables4SparkTable(
      path,
      schemaOf(snap),
      snap.metadata.partitionColumns,
      options,
      acceptsWrites = true,
      knownSnapshot = Some(Some(snap))
    )
  }
}
