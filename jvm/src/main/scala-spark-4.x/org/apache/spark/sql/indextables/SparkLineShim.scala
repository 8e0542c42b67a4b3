package org.apache.spark.sql.indextables

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.analysis.NamedRelation
import org.apache.spark.sql.catalyst.catalog.{CatalogStorageFormat, CatalogTable}
import org.apache.spark.sql.catalyst.expressions.{CommonExpressionRef, DynamicPruningSubquery, Expression, With}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.streaming.StreamingRelationV2
import org.apache.spark.sql.catalyst.plans.logical.{AppendData, LogicalPlan, OverwriteByExpression, OverwritePartitionsDynamic, WriteDelta}
import org.apache.spark.sql.classic.{ClassicConversions, ExpressionUtils}
import org.apache.spark.sql.connector.catalog.Table
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.sql.{Column, DataFrame}

/**
 * [[SparkShim]] for Spark 4.x (compiled against 4.0; runs on 4.0, 4.1 and 4.2). The Catalyst
 * case classes whose signatures 4.1 and 4.2 changed are built and copied through [[Reflective]].
 */
object SparkLineShim extends SparkShim {

  override def column(e: Expression): Column = ExpressionUtils.column(e)

  override def logicalPlan(df: DataFrame): LogicalPlan =
    ClassicConversions.castToImpl(df).logicalPlan

  override def batchOf(microBatch: DataFrame): DataFrame = {
    val batch = ClassicConversions.castToImpl(microBatch)
    batch.sparkSession
      .internalCreateDataFrame(batch.queryExecution.toRdd, batch.schema, isStreaming = false)
  }

  override def dynamicPruningSubquery(
      key: Expression,
      buildQuery: LogicalPlan,
      buildKey: Expression,
      onlyInBroadcast: Boolean): Expression =
    DynamicPruningSubquery(key, buildQuery, Seq(buildKey), Seq(0), onlyInBroadcast)

  override def parseRoutineParam(delegate: ParserInterface, sqlText: String): StructType =
    delegate.parseRoutineParam(sqlText)

  override def errorClass(e: SparkThrowable): String = e.getCondition

  // Innermost first, so that a definition holds no common expression when it is inlined.
  override def inlineCommonExpressions(e: Expression): Expression = e.transformUp {
    case With(child, defs) =>
      val byId = defs.map(d => d.id -> d.child).toMap
      child.transformUp { case ref: CommonExpressionRef if byId.contains(ref.id) => byId(ref.id) }
  }

  override def relation(table: Table, options: CaseInsensitiveStringMap): DataSourceV2Relation =
    Reflective
      .call(classOf[DataSourceV2Relation], "create", table, None, None, options)
      .asInstanceOf[DataSourceV2Relation]

  override def withTable(r: DataSourceV2Relation, table: Table): DataSourceV2Relation =
    Reflective.copy(r, "table" -> table)

  override def withOptions(
      r: DataSourceV2Relation,
      options: CaseInsensitiveStringMap): DataSourceV2Relation =
    Reflective.copy(r, "options" -> options)

  // Spark 4.2's relation has one more field (its source's identifying name).
  override def withStreamOptions(
      s: StreamingRelationV2,
      options: CaseInsensitiveStringMap): StreamingRelationV2 =
    Reflective.copy(s, "extraOptions" -> options)

  override def appendByName(
      table: NamedRelation,
      query: LogicalPlan,
      options: Map[String, String]): LogicalPlan =
    Reflective.call(classOf[AppendData], "byName", table, query, options).asInstanceOf[LogicalPlan]

  override def overwriteByName(
      table: NamedRelation,
      query: LogicalPlan,
      deleteExpr: Expression,
      options: Map[String, String]): LogicalPlan =
    Reflective
      .call(classOf[OverwriteByExpression], "byName", table, query, deleteExpr, options)
      .asInstanceOf[LogicalPlan]

  override def withQuery(write: LogicalPlan, query: LogicalPlan): LogicalPlan = write match {
    case _: AppendData | _: OverwriteByExpression | _: OverwritePartitionsDynamic |
        _: WriteDelta =>
      Reflective.copy(write, "query" -> query)
    case other => other
  }

  override def catalogTable(entry: SessionCatalogEntry): CatalogTable = {
    val storage =
      Reflective.copy(CatalogStorageFormat.empty, "locationUri" -> Some(entry.location))
    val table = Reflective.construct(
      classOf[CatalogTable],
      entry.identifier,
      entry.tableType,
      storage,
      new StructType())
    Reflective.copy(table, "provider" -> Some(entry.provider), "comment" -> entry.comment)
  }
}
