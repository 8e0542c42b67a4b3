package io.indextables.spark.sync

import java.util.Locale

import org.apache.spark.sql.indextables.SparkLineShim
import org.apache.spark.sql.{AnalysisException, Row, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.expressions.BindReferences
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.plans.logical.{Filter => FilterNode}
import org.apache.spark.sql.types.StructType

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.filters.AnalyzedPredicate
import io.indextables.spark.schema.PartitionValues

/**
 * The WHERE clause of a build: a Spark SQL predicate on partition columns only, evaluated on a
 * file's or a split's partition values typed as the source's partition schema (`hour > 9` on an
 * int column compares integers). A partition is in scope only where it is TRUE. Driver side.
 */
object PartitionScope {

  val Command = "BUILD INDEXTABLES COMPANION"

  /** `predicate` as a test of partition values; fails, naming it, when it cannot be one. */
  def parse(
      spark: SparkSession,
      predicate: String,
      partitions: StructType,
      timeZone: String): Map[String, String] => Boolean = {
    def invalid(why: String) = IndexTablesErrors.companionInvalidOption("WHERE", predicate, why)
    val parsed =
      try spark.sessionState.sqlParser.parseExpression(predicate)
      catch { case e: ParseException => throw invalid(e.getMessage.trim) }
    val names = partitions.fieldNames.map(_.toLowerCase(Locale.ROOT)).toSet
    parsed.collect { case a: UnresolvedAttribute => a.nameParts.mkString(".") }
      .find(c => !names.contains(c.toLowerCase(Locale.ROOT)))
      .foreach { _ =>
        throw IndexTablesErrors.partitionPredicateRequired(
          Command,
          predicate,
          partitions.fieldNames.toSeq)
      }
    val empty = spark.createDataFrame(java.util.Collections.emptyList[Row](), partitions)
    val bound =
      try empty.where(SparkLineShim.column(parsed)).queryExecution.analyzed match {
          case FilterNode(c, child) => BindReferences.bindReference(c, child.output)
          case other => throw IndexTablesErrors.internalError(s"unexpected plan $other")
        }
      catch { case e: AnalysisException => throw invalid(e.getSimpleMessage) }
    val test = AnalyzedPredicate.interpreted(bound)
    values => {
      val row = InternalRow.fromSeq(partitions.fields.toSeq.map { f =>
        PartitionValues.decode(values.getOrElse(f.name, null), f.dataType, timeZone)
      })
      test.synchronized(test.eval(row))
    }
  }
}
