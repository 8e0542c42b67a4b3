package org.apache.spark.sql.indextables

import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.connector.catalog.{CatalogV2Util, Column, Table, V1Table}
import org.apache.spark.sql.connector.write.RowLevelOperationTable
import org.apache.spark.sql.types.StructType

/**
 * Reaches the `private[sql]` pieces of Spark's catalog API that a session catalog extension
 * needs: the session catalog's V1 tables, the column conversion of `createTable`, and the table
 * behind a row-level command's scan. Stateless.
 */
object SparkCatalogBridge {

  /** The session catalog's entry behind `table`, when the session catalog returned a V1 table. */
  def v1CatalogTable(table: Table): Option[CatalogTable] = table match {
    case v1: V1Table => Some(v1.catalogTable)
    case _ => None
  }

  /** The table a row-level command's scan reads, when `table` is that scan's wrapper. */
  def rowLevelOperationTarget(table: Table): Option[Table] = table match {
    case r: RowLevelOperationTable => Some(r.table)
    case _ => None
  }

  /** Spark's own conversion of `createTable`'s columns to a schema (comments, defaults kept). */
  def structType(columns: Array[Column]): StructType = CatalogV2Util.v2ColumnsToStructType(columns)

  /** Spark's V1 filter of a V2 predicate, when it has one. */
  def toV1(predicate: org.apache.spark.sql.connector.expressions.filter.Predicate)
      : Option[org.apache.spark.sql.sources.Filter] =
    org.apache.spark.sql.internal.connector.PredicateUtils.toV1(predicate)
}
