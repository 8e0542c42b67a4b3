package io.indextables.spark.lake

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.iceberg.Table
import org.apache.iceberg.catalog.TableIdentifier
import org.apache.iceberg.hadoop.{HadoopCatalog, HadoopTables}
import org.apache.iceberg.spark.Spark3Util
import org.apache.spark.sql.SparkSession

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.storage.LogStore

/**
 * How a BUILD names an Iceberg table: a path (a Hadoop table, its metadata beside its data),
 * or an identifier in a catalog: `CATALOG 'n'` names a Spark catalog that is an Iceberg catalog
 * (`spark.sql.catalog.n`), `WAREHOUSE 'uri'` a Hadoop catalog's warehouse directory. The index
 * records it (see [[IcebergTables.configuration]]) so that a read can find the table again.
 */
final case class IcebergTableRef(
    table: String,
    catalog: Option[String],
    warehouse: Option[String]) {

  def describe: String = catalog.map(c => s"$c.$table").orElse(warehouse.map(w => s"$table in $w"))
    .getOrElse(table)
}

/**
 * Apache Iceberg tables through Iceberg's own library (iceberg-spark-runtime, the user's, on the
 * class path when their tables are Iceberg tables): how an index names one, loads it and tells
 * how far it moved. Both the companion build (`sync/IcebergTableSource`) and the staleness check
 * of a read (`read/CompanionStaleness`) use it. Driver side.
 */
object IcebergTables {

  val Format: String = Libraries.IcebergFormat

  /** Ours: how the index finds its Iceberg table again (the table as the BUILD named it). */
  val TableKey = "indextables.companion.icebergTable"
  val CatalogKey = "indextables.companion.icebergCatalog"
  val WarehouseKey = "indextables.companion.icebergWarehouse"

  def configuration(ref: IcebergTableRef): Map[String, String] =
    Map(TableKey -> ref.table) ++ ref.catalog.map(CatalogKey -> _) ++
      ref.warehouse.map(WarehouseKey -> _)

  /** The reference an index's metadata records, if it is an index of an Iceberg table. */
  def recorded(configuration: Map[String, String]): Option[IcebergTableRef] =
    configuration.get(TableKey).map(t =>
      IcebergTableRef(t, configuration.get(CatalogKey), configuration.get(WarehouseKey)))

  /** The table `ref` names, its metadata read now. */
  def load(spark: SparkSession, ref: IcebergTableRef, conf: Configuration): Table = {
    def notATable(why: String) =
      IndexTablesErrors.companionSourceNotATable(Format, ref.describe, why)
    val table =
      try ((ref.catalog, ref.warehouse) match {
          case (Some(c), _) =>
            val catalog =
              try Spark3Util.loadIcebergCatalog(spark, c)
              catch {
                case NonFatal(e) => throw notATable(
                    s"catalog '$c' is not an Iceberg catalog of this session (" +
                      s"spark.sql.catalog.$c: ${e.getMessage})")
              }
            catalog.loadTable(TableIdentifier.parse(ref.table))
          case (None, Some(w)) =>
            new HadoopCatalog(conf, w).loadTable(TableIdentifier.parse(ref.table))
          case _ =>
            val tables = new HadoopTables(conf)
            if (!tables.exists(ref.table)) {
              val path = LogStore.qualify(new Path(ref.table), conf)
              if (!LogStore.forPath(path, conf).exists(path))
                throw IndexTablesErrors.companionSourceNotFound(ref.table)
              throw notATable("it has no Iceberg metadata (metadata/ with a version-hint or " +
                "metadata file); name a table in a catalog with CATALOG or WAREHOUSE")
            }
            tables.load(ref.table)
        })
      catch {
        case e: org.apache.iceberg.exceptions.NoSuchTableException => throw notATable(e.getMessage)
        case e: org.apache.iceberg.exceptions.NoSuchNamespaceException =>
          throw notATable(e.getMessage)
      }
    table.refresh()
    table
  }

  /**
   * How many snapshots the table's current one is past `synced`, along its history, or None
   * when `synced` is not among its ancestors (expired, or rolled back past).
   */
  def snapshotsSince(table: Table, synced: Long): Option[Long] = {
    var at = Option(table.currentSnapshot())
    var steps = 0L
    while (at.exists(_.snapshotId() != synced)) {
      steps += 1
      at = at.flatMap(s => Option(s.parentId()).flatMap(p => Option(table.snapshot(p))))
    }
    at.map(_ => steps)
  }
}
