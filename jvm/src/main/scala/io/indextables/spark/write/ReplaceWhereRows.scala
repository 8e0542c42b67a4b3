package io.indextables.spark.write

import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.optimizer.{ConstantFolding, LikeSimplification}
import org.apache.spark.sql.catalyst.expressions.{BindReferences, Expression, PredicateHelper}
import org.apache.spark.sql.catalyst.plans.logical.{Filter => FilterNode}
import org.apache.spark.sql.functions.{lit, not}
import org.apache.spark.sql.indextables.{SparkFilterBridge, SparkLineShim}
import org.apache.spark.sql.sources._
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}

import io.indextables.spark.IndexTablesErrors

/**
 * A replaceWhere predicate in its three uses: Spark filters, to find the splits it may touch
 * from partition values and statistics; a column, to read the rows a rewritten split keeps; an
 * expression bound to the written schema, which each write task checks every row against.
 * Driver side, except the bound expression, which tasks evaluate.
 */
object ReplaceWhereRows extends PredicateHelper {

  /**
   * The SQL predicate `predicate` on a table of `schema` as a write mode. Fails before anything
   * is written, naming the predicate, when it does not parse, names an unknown column, or has a
   * conjunct that cannot be told per split (a UDF, a subquery, ...).
   */
  def parse(
      spark: SparkSession,
      table: String,
      predicate: String,
      schema: StructType): WriteMode.ReplaceWhere =
    WriteMode.ReplaceWhere(
      predicate,
      filters(
        spark,
        predicate,
        schema,
        why =>
          IndexTablesErrors.invalidReplaceWhere(
            table,
            predicate,
            why)))

  /**
   * The SQL predicate `predicate` on a table of `schema` as Spark filters, one per conjunct,
   * with typed literals (the analyzer casts them to the column's type). Fails with
   * `invalid(why)` when it does not parse, names an unknown column, or has a conjunct that is
   * not a comparison, IN, null check or string match of columns with literals.
   */
  def filters(
      spark: SparkSession,
      predicate: String,
      schema: StructType,
      invalid: String => Exception): Seq[Filter] = {
    val condition =
      // Constant folding turns the analyzer's casts of literals (day = '2024-01-02' on a date
      // column) into plain literals, and LIKE 'ab%' becomes a prefix match, as Spark's own
      // pushdown sees them.
      try LikeSimplification(
          ConstantFolding(empty(spark, schema).where(predicate).queryExecution.analyzed)) match {
          case FilterNode(c, _) => c
          case other => throw IndexTablesErrors.internalError(s"unexpected plan $other")
        }
      catch {
        case e: org.apache.spark.sql.AnalysisException => throw invalid(e.getSimpleMessage)
      }
    splitConjunctivePredicates(condition).map { c =>
      SparkFilterBridge.translateFilter(c).getOrElse(throw invalid(
        s"'${c.sql}' is not a comparison, IN, null check or string match of columns with " +
          "literals, so the splits it touches cannot be found"))
    }
  }

  /** The conjunction of `filters` as a column (TRUE, FALSE or NULL per row). */
  def column(filters: Seq[Filter]): Column = filters.map(toColumn).reduceOption(_ && _)
    .getOrElse(lit(true))

  /** The rows a rewritten split keeps: those where the predicate is not TRUE. */
  def kept(filters: Seq[Filter]): Column =
    not(org.apache.spark.sql.functions.coalesce(column(filters), lit(false)))

  /** The conjunction of `filters`, resolved against `schema` and bound to its ordinals. */
  def bound(spark: SparkSession, filters: Seq[Filter], schema: StructType): Expression = {
    val plan = empty(spark, schema).where(column(filters)).queryExecution.analyzed
    plan match {
      case FilterNode(c, child) => BindReferences.bindReference(c, child.output)
      case other => throw IndexTablesErrors.internalError(s"unexpected plan $other")
    }
  }

  private def empty(spark: SparkSession, schema: StructType): DataFrame =
    spark.createDataFrame(java.util.Collections.emptyList[Row](), schema)

  private def attr(name: String): Column = SparkLineShim.column(UnresolvedAttribute(Seq(name)))

  private def toColumn(f: Filter): Column = f match {
    case EqualTo(a, v) => attr(a) === lit(v)
    case EqualNullSafe(a, v) => attr(a) <=> lit(v)
    case GreaterThan(a, v) => attr(a) > lit(v)
    case GreaterThanOrEqual(a, v) => attr(a) >= lit(v)
    case LessThan(a, v) => attr(a) < lit(v)
    case LessThanOrEqual(a, v) => attr(a) <= lit(v)
    case In(a, vs) => attr(a).isin(vs.toIndexedSeq: _*)
    case IsNull(a) => attr(a).isNull
    case IsNotNull(a) => attr(a).isNotNull
    case StringStartsWith(a, s) => attr(a).startsWith(s)
    case StringEndsWith(a, s) => attr(a).endsWith(s)
    case StringContains(a, s) => attr(a).contains(s)
    case And(l, r) => toColumn(l) && toColumn(r)
    case Or(l, r) => toColumn(l) || toColumn(r)
    case Not(c) => not(toColumn(c))
    case AlwaysTrue() => lit(true)
    case AlwaysFalse() => lit(false)
    case other => throw IndexTablesErrors.internalError(s"unsupported filter $other")
  }
}
