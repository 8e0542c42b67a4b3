package io.indextables.spark.catalog

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.connector.catalog.{DelegatingCatalogExtension, Identifier, Table}
import org.apache.spark.sql.types.{DataType, StructType}

import io.indextables.spark.core.{IndexTables4SparkTable, IndexTables4SparkTableProvider, TableLogResolver}

/**
 * The session catalog with IndexTables path tables: `indextables.`/path/to/table`` names the
 * table at that path, for reads, SQL and DataSource V2 writes
 * (`df.writeTo("indextables.`/path`").append()`, `.overwrite(condition)`,
 * `.overwritePartitions()`), as Delta's catalog does for `delta.`/path``. Every other name goes
 * to the session catalog it wraps. Set it as `spark.sql.catalog.spark_catalog`
 * (`indextables.configure_spark` does, unless another catalog is set there).
 */
class IndexTablesCatalog extends DelegatingCatalogExtension {

  override def loadTable(ident: Identifier): Table =
    IndexTablesCatalog.pathOf(ident) match {
      case Some(path) => IndexTablesCatalog.pathTable(path)
      case None => super.loadTable(ident)
    }

  override def tableExists(ident: Identifier): Boolean =
    IndexTablesCatalog.pathOf(ident) match {
      case Some(path) => TableLogResolver.load(path, Map("path" -> path)).isDefined
      case None => super.tableExists(ident)
    }
}

object IndexTablesCatalog {

  /** The path that `indextables.`<absolute path>`` names, if `ident` is one. */
  def pathOf(ident: Identifier): Option[String] = ident.namespace() match {
    case Array(ns)
        if ns.equalsIgnoreCase(IndexTables4SparkTableProvider.ShortName) &&
          new Path(ident.name()).isAbsolute => Some(ident.name())
    case _ => None
  }

  /**
   * The table at `path`. A path without one fails naming it (INDEXTABLES_TABLE_NOT_FOUND):
   * Spark would otherwise go on to try the name as a query on files and report that instead.
   */
  private def pathTable(path: String): Table = {
    val options = Map("path" -> path)
    val snap = TableLogResolver.loadExisting(path, options)
    new IndexTables4SparkTable(
      path,
      DataType.fromJson(snap.metadata.schemaString).asInstanceOf[StructType],
      snap.metadata.partitionColumns,
      options,
      acceptsWrites = true,
      knownSnapshot = Some(Some(snap))
    )
  }
}
