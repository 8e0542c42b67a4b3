package org.apache.spark.sql.indextables

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.DataSourceStrategy
import org.apache.spark.sql.sources.Filter

/** Reaches Spark's `private[sql]` Catalyst-to-V1 filter translation for the IndexQuery rule. */
object SparkFilterBridge {
  def translateFilter(predicate: Expression): Option[Filter] =
    DataSourceStrategy.translateFilter(predicate, supportNestedPredicatePushdown = false)
}
