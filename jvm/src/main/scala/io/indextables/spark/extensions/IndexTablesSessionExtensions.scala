package io.indextables.spark.extensions

import org.apache.spark.sql.SparkSessionExtensions

import io.indextables.spark.catalyst.{IndexQueryPlanCheck, IndexTablesAggregateStrategy, IndexTablesDmlCommand, IndexTablesDmlStrategy, IndexTablesInsertByPosition, IndexTablesRowLevelResolution, RowLevelKeyFilter, SnippetPreparation, StreamingSinkCheck, V2IndexQueryExpressionRule}
import io.indextables.spark.expressions.{BucketFunctions, IndexQueryFunctions, SnippetFunctions}
import io.indextables.spark.sql.IndexTables4SparkSqlParser

/**
 * The IndexTables SQL extensions; enable with
 * `spark.sql.extensions=io.indextables.spark.extensions.IndexTables4SparkExtensions`, the Java
 * front that checks the Spark line ([[io.indextables.spark.SparkLineGate]]) before it loads this.
 */
class IndexTablesSessionExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    // Parser
    extensions.injectParser((_, delegate) => new IndexTables4SparkSqlParser(delegate))
    IndexQueryFunctions.all.foreach(extensions.injectFunction)
    BucketFunctions.all.foreach(extensions.injectFunction)
    extensions.injectFunction(SnippetFunctions.function)

    // Analyzer
    extensions.injectResolutionRule { session =>
      V2IndexQueryExpressionRule(session, V2IndexQueryExpressionRule.Resolution)
    }
    extensions.injectResolutionRule(IndexTablesInsertByPosition)
    extensions.injectResolutionRule(_ => IndexTablesRowLevelResolution)
    extensions.injectResolutionRule(_ => IndexTablesDmlCommand.Wrap)
    extensions.injectResolutionRule(_ => SnippetPreparation)
    extensions.injectCheckRule(_ => StreamingSinkCheck)

    // Optimizer
    extensions.injectOptimizerRule { session =>
      V2IndexQueryExpressionRule(session, V2IndexQueryExpressionRule.Optimization)
    }

    extensions.injectPreCBORule(_ => RowLevelKeyFilter)

    // Planner
    extensions.injectPlannerStrategy(_ => IndexQueryPlanCheck)
    extensions.injectPlannerStrategy(_ => IndexTablesAggregateStrategy)
    extensions.injectPlannerStrategy(_ => IndexTablesDmlStrategy)
  }
}
