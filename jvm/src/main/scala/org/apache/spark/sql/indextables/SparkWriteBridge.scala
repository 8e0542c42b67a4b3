package org.apache.spark.sql.indextables

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.connector.catalog.Table
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * Runs a DataSource V2 append or overwrite of a DataFrame into a table object we built. Spark's
 * DataFrameWriter offers path-based V2 tables only Append and Overwrite; IndexTables takes every
 * path-based save through its V1 entry point, settles the save mode there, and writes through
 * V2 with this. Driver side.
 */
object SparkWriteBridge {
  def write(
      spark: SparkSession,
      table: Table,
      data: DataFrame,
      overwrite: Boolean,
      options: Map[String, String]): Unit = {
    val relation = SparkLineShim.relation(table, new CaseInsensitiveStringMap(options.asJava))
    val query = SparkLineShim.logicalPlan(data)
    val command =
      if (overwrite) SparkLineShim.overwriteByName(relation, query, Literal(true), options)
      else SparkLineShim.appendByName(relation, query, options)
    spark.sessionState.executePlan(command).assertCommandExecuted()
  }
}
