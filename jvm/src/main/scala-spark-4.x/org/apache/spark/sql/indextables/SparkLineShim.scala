package org.apache.spark.sql.indextables

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.expressions.{CommonExpressionRef, DynamicPruningSubquery, Expression, With}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.classic.{ClassicConversions, ExpressionUtils}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.{Column, DataFrame}

/** [[SparkShim]] for Spark 4.x (compiled against 4.0). */
object SparkLineShim extends SparkShim {

  override def column(e: Expression): Column = ExpressionUtils.column(e)

  override def logicalPlan(df: DataFrame): LogicalPlan =
    ClassicConversions.castToImpl(df).logicalPlan

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
}
