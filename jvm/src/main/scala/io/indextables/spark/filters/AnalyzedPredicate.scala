package io.indextables.spark.filters

import org.apache.spark.sql.catalyst.expressions.{BasePredicate, Expression, Predicate, RuntimeReplaceable}
import org.apache.spark.sql.indextables.SparkLineShim

/**
 * Evaluates a predicate taken from an analyzed (not optimized) plan, row by row. Such a plan
 * may hold expressions that only stand for others until the optimizer replaces them
 * (`RuntimeReplaceable`: Spark 4's BETWEEN, among others) or that the optimizer rewrites into a
 * projection (Spark 4's common expressions), and that fail when evaluated; they are replaced
 * here as the optimizer would. Stateless.
 */
object AnalyzedPredicate {

  /** An interpreted predicate of `bound` (bound to its input row), with replaced expressions. */
  def interpreted(bound: Expression): BasePredicate =
    Predicate.createInterpreted(SparkLineShim.inlineCommonExpressions(bound.transform {
      case r: RuntimeReplaceable => r.replacement
    }))
}
