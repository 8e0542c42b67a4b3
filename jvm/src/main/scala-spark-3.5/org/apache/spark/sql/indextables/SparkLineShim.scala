package org.apache.spark.sql.indextables

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.analysis.NamedRelation
import org.apache.spark.sql.catalyst.catalog.{CatalogStorageFormat, CatalogTable}
import org.apache.spark.sql.catalyst.expressions.{DynamicPruningSubquery, Expression}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.streaming.StreamingRelationV2
import org.apache.spark.sql.catalyst.plans.logical.{AppendData, LogicalPlan, OverwriteByExpression, OverwritePartitionsDynamic, WriteDelta}
import org.apache.spark.sql.connector.catalog.Table
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.sql.{Column, DataFrame}

/** [[SparkShim]] for Spark 3.5. */
object SparkLineShim extends SparkShim {

  override def column(e: Expression): Column = new Column(e)

  override def logicalPlan(df: DataFrame): LogicalPlan = df.logicalPlan

  override def batchOf(microBatch: DataFrame): DataFrame = microBatch.sparkSession
    .internalCreateDataFrame(
      microBatch.queryExecution.toRdd,
      microBatch.schema,
      isStreaming = false)

  override def dynamicPruningSubquery(
      key: Expression,
      buildQuery: LogicalPlan,
      buildKey: Expression,
      onlyInBroadcast: Boolean): Expression =
    DynamicPruningSubquery(key, buildQuery, Seq(buildKey), 0, onlyInBroadcast)

  // Spark 3.5's parser interface has no such call, so nothing calls this.
  override def parseRoutineParam(delegate: ParserInterface, sqlText: String): StructType =
    throw new UnsupportedOperationException(s"parseRoutineParam($sqlText) on Spark 3.5")

  override def errorClass(e: SparkThrowable): String = e.getErrorClass

  override def inlineCommonExpressions(e: Expression): Expression = e

  override def relation(table: Table, options: CaseInsensitiveStringMap): DataSourceV2Relation =
    DataSourceV2Relation.create(table, None, None, options)

  override def withTable(r: DataSourceV2Relation, table: Table): DataSourceV2Relation =
    r.copy(table = table)

  override def withOptions(
      r: DataSourceV2Relation,
      options: CaseInsensitiveStringMap): DataSourceV2Relation = r.copy(options = options)

  override def withStreamOptions(
      s: StreamingRelationV2,
      options: CaseInsensitiveStringMap): StreamingRelationV2 = s.copy(extraOptions = options)

  override def appendByName(
      table: NamedRelation,
      query: LogicalPlan,
      options: Map[String, String]): LogicalPlan = AppendData.byName(table, query, options)

  override def overwriteByName(
      table: NamedRelation,
      query: LogicalPlan,
      deleteExpr: Expression,
      options: Map[String, String]): LogicalPlan =
    OverwriteByExpression.byName(table, query, deleteExpr, options)

  override def withQuery(write: LogicalPlan, query: LogicalPlan): LogicalPlan = write match {
    case a: AppendData => a.copy(query = query)
    case o: OverwriteByExpression => o.copy(query = query)
    case o: OverwritePartitionsDynamic => o.copy(query = query)
    case w: WriteDelta => w.copy(query = query)
    case other => other
  }

  override def catalogTable(entry: SessionCatalogEntry): CatalogTable =
    CatalogTable(
      identifier = entry.identifier,
      tableType = entry.tableType,
      storage = CatalogStorageFormat.empty.copy(locationUri = Some(entry.location)),
      schema = new StructType(),
      provider = Some(entry.provider),
      comment = entry.comment
    )
}
