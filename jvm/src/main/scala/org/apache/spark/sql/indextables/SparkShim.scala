package org.apache.spark.sql.indextables

import java.net.URI

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.NamedRelation
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.streaming.StreamingRelationV2
import org.apache.spark.sql.connector.catalog.Table
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.sql.{Column, DataFrame}

/**
 * What differs between the Spark lines the plugin is built for, Spark 3.5 (Scala 2.12) and Spark
 * 4.x (Scala 2.13): the shared code reaches these Spark APIs through this trait only. Each line
 * implements it once, as the object `SparkLineShim` in its own source folder
 * (`src/main/scala-spark-3.5`, `src/main/scala-spark-4.x`; the build adds the one of the Scala
 * version it compiles). Spark 4.1 and 4.2 changed the binary signatures of Catalyst case classes
 * the plugin builds or copies (they gained parameters): those calls are here too, so that the one
 * Spark 4 JAR, compiled against 4.0, runs on 4.0, 4.1 and 4.2. Stateless; any thread, driver or
 * executor.
 */
trait SparkShim {

  /** A Column of a Catalyst expression (Spark 4's Column holds a `ColumnNode`). */
  def column(e: Expression): Column

  /** The (analyzed) logical plan of a DataFrame (Spark 4's `Dataset` is an interface). */
  def logicalPlan(df: DataFrame): LogicalPlan

  /**
   * A micro-batch's rows as a batch DataFrame, which a batch write can plan: the rows of the
   * batch's own execution (its plan holds the stream's sources, which no other plan may run).
   */
  def batchOf(microBatch: DataFrame): DataFrame

  /**
   * A dynamic pruning subquery on `key`: `key IN (distinct buildKey of buildQuery)`, planned by
   * Spark as a runtime filter (Spark 4 takes a list of build keys).
   */
  def dynamicPruningSubquery(
      key: Expression,
      buildQuery: LogicalPlan,
      buildKey: Expression,
      onlyInBroadcast: Boolean): Expression

  /**
   * Spark 4's `ParserInterface.parseRoutineParam` (the parameters of a SQL function), delegated;
   * Spark 3.5 has no such call.
   */
  def parseRoutineParam(delegate: ParserInterface, sqlText: String): StructType

  /** The error class of a Spark error (Spark 4 names it the condition). */
  def errorClass(e: SparkThrowable): String

  /**
   * `e` with each common expression (Spark 4's `With`, which its BETWEEN stands for) inlined where
   * it is referred to, so that it can be evaluated outside a plan: the optimizer would otherwise
   * rewrite it into a projection. Spark 3.5 has none.
   */
  def inlineCommonExpressions(e: Expression): Expression

  /** `DataSourceV2Relation.create(table, None, None, options)`. */
  def relation(table: Table, options: CaseInsensitiveStringMap): DataSourceV2Relation

  /** `r` reading `table` instead. */
  def withTable(r: DataSourceV2Relation, table: Table): DataSourceV2Relation

  /** `r` with `options` instead of its own. */
  def withOptions(r: DataSourceV2Relation, options: CaseInsensitiveStringMap): DataSourceV2Relation

  /** A stream's read of the same table with other options (`extraOptions`). */
  def withStreamOptions(
      s: StreamingRelationV2,
      options: CaseInsensitiveStringMap): StreamingRelationV2

  /** `AppendData.byName(table, query, options)`. */
  def appendByName(table: NamedRelation, query: LogicalPlan, options: Map[String, String])
      : LogicalPlan

  /** `OverwriteByExpression.byName(table, query, deleteExpr, options)`. */
  def overwriteByName(
      table: NamedRelation,
      query: LogicalPlan,
      deleteExpr: Expression,
      options: Map[String, String]): LogicalPlan

  /**
   * A write command (`AppendData`, `OverwriteByExpression`, `OverwritePartitionsDynamic`,
   * `WriteDelta`) writing `query` instead; any other plan unchanged.
   */
  def withQuery(write: LogicalPlan, query: LogicalPlan): LogicalPlan

  /** The session catalog's entry for `entry`, with no schema (the table's log holds it). */
  def catalogTable(entry: SessionCatalogEntry): CatalogTable
}

/** A session catalog entry: its identity, type, location, provider and comment only. */
final case class SessionCatalogEntry(
    identifier: TableIdentifier,
    tableType: CatalogTableType,
    location: URI,
    provider: String,
    comment: Option[String])
