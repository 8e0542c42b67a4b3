package org.apache.spark.sql.indextables

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.{Column, DataFrame}

/**
 * What differs between the Spark lines the plugin is built for, Spark 3.5 (Scala 2.12) and Spark
 * 4.x (Scala 2.13): the shared code reaches these Spark APIs through this trait only. Each line
 * implements it once, as the object `SparkLineShim` in its own source folder
 * (`src/main/scala-spark-3.5`, `src/main/scala-spark-4.x`; the build adds the one of the Scala
 * version it compiles). Stateless; any thread, driver or executor.
 */
trait SparkShim {

  /** A Column of a Catalyst expression (Spark 4's Column holds a `ColumnNode`). */
  def column(e: Expression): Column

  /** The (analyzed) logical plan of a DataFrame (Spark 4's `Dataset` is an interface). */
  def logicalPlan(df: DataFrame): LogicalPlan

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
}
