package org.apache.spark.sql.indextables

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.expressions.{DynamicPruningSubquery, Expression}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.{Column, DataFrame}

/** [[SparkShim]] for Spark 3.5. */
object SparkLineShim extends SparkShim {

  override def column(e: Expression): Column = new Column(e)

  override def logicalPlan(df: DataFrame): LogicalPlan = df.logicalPlan

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
}
