package io.indextables.spark.filters

import java.util.Locale

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.expressions.{BasePredicate, BindReferences, Expression, PredicateHelper}
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.plans.logical.{Filter => FilterNode}
import org.apache.spark.sql.indextables.SparkLineShim
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.sql.{AnalysisException, Row, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.PartitionValues

/**
 * The partition-only WHERE clause of a maintenance command (MERGE SPLITS, DROP PARTITIONS, the
 * cache commands): one Spark SQL predicate on partition columns, evaluated on each split's
 * partition values typed as the table declares them (`hour > 9` on an int column compares
 * integers, never strings; a date column compares dates; a NULL partition value is SQL NULL).
 * A split matches only where the predicate is TRUE (not FALSE, not NULL). Immutable; [[matches]]
 * is thread-safe. Built on the driver.
 */
final class PartitionPredicate private (
    val text: String,
    partitionColumns: Seq[String],
    types: Seq[DataType],
    timeZone: String,
    test: BasePredicate) {

  /** Whether the predicate is TRUE for a split with these (encoded) partition values. */
  def matches(values: Map[String, String]): Boolean = {
    val row = InternalRow.fromSeq(partitionColumns.zip(types).map { case (c, t) =>
      PartitionValues.decode(values.getOrElse(c, null), t, timeZone)
    })
    test.synchronized(test.eval(row))
  }
}

object PartitionPredicate extends PredicateHelper {

  /**
   * How a command reports a WHERE clause it cannot use, each in its own error class: `invalid`
   * (why: it does not parse or resolve, or a condition names no column) and `notPartition` (the
   * columns it names that are not partition columns).
   */
  final case class Errors(invalid: String => Exception, notPartition: Seq[String] => Exception)

  /**
   * `text` as a test of partition values of a table with `schema` and `partitionColumns`;
   * fails through `errors` when it does not parse, names a column that is not a partition
   * column, has a condition that names no column, or does not resolve.
   */
  def parse(
      spark: SparkSession,
      text: String,
      schema: StructType,
      partitionColumns: Seq[String],
      timeZone: String,
      errors: Errors): PartitionPredicate = {
    val parsed =
      try spark.sessionState.sqlParser.parseExpression(text)
      catch { case e: ParseException => throw errors.invalid(e.getMessage.trim) }
    val partitions = partitionColumns.map(_.toLowerCase(Locale.ROOT)).toSet
    val outside = parsed.collect { case a: UnresolvedAttribute => a.nameParts.mkString(".") }
      .filterNot(c => partitions.contains(c.toLowerCase(Locale.ROOT))).distinct
    if (outside.nonEmpty) throw errors.notPartition(outside)
    if (splitConjunctivePredicates(parsed).exists(noColumn)) {
      throw errors.invalid("every condition must name a partition column")
    }
    val partSchema = StructType(partitionColumns.map(c => schema(c)))
    val empty = spark.createDataFrame(java.util.Collections.emptyList[Row](), partSchema)
    val bound =
      try empty.where(SparkLineShim.column(parsed)).queryExecution.analyzed match {
          case FilterNode(c, child) => BindReferences.bindReference(c, child.output)
          case other => throw IndexTablesErrors.internalError(s"unexpected plan $other")
        }
      catch { case e: AnalysisException => throw errors.invalid(e.getSimpleMessage) }
    new PartitionPredicate(
      text,
      partitionColumns,
      partSchema.fields.map(_.dataType).toSeq,
      timeZone,
      AnalyzedPredicate.interpreted(bound))
  }

  private def noColumn(e: Expression): Boolean =
    e.collectFirst { case a: UnresolvedAttribute => a }.isEmpty
}
