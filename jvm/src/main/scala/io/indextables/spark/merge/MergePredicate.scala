package io.indextables.spark.merge

import java.util.Locale

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.expressions.{BindReferences, Predicate}
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.plans.logical.{Filter => FilterNode}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.{AnalysisException, Column, Row, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.PartitionValues

/**
 * The WHERE clause of MERGE SPLITS: a SQL predicate on partition columns only, evaluated on each
 * split's partition values typed as the table declares them (`hour > 9` on an int column
 * compares integers, never strings). A split is merged only where the predicate is TRUE. Driver
 * side.
 */
object MergePredicate {

  /**
   * The predicate `predicate` as a test of partition values; fails, naming the predicate, when
   * it does not parse, or names a column that is not a partition column, or does not resolve.
   */
  def parse(
      spark: SparkSession,
      table: String,
      predicate: String,
      schema: StructType,
      partitionColumns: Seq[String],
      timeZone: String): Map[String, String] => Boolean = {
    val parsed =
      try spark.sessionState.sqlParser.parseExpression(predicate)
      catch {
        case e: ParseException =>
          throw IndexTablesErrors.invalidMergeWhere(table, predicate, e.getMessage.trim)
      }
    val partitions = partitionColumns.map(_.toLowerCase(Locale.ROOT)).toSet
    parsed.collect { case a: UnresolvedAttribute => a.nameParts.mkString(".") }
      .find(c => !partitions.contains(c.toLowerCase(Locale.ROOT)))
      .foreach(c =>
        throw IndexTablesErrors.mergeWhereNotOnPartitions(table, predicate, c, partitionColumns))
    val partSchema = StructType(partitionColumns.map(c => schema(c)))
    val empty = spark.createDataFrame(java.util.Collections.emptyList[Row](), partSchema)
    val bound =
      try empty.where(new Column(parsed)).queryExecution.analyzed match {
          case FilterNode(c, child) => BindReferences.bindReference(c, child.output)
          case other => throw IndexTablesErrors.internalError(s"unexpected plan $other")
        }
      catch {
        case e: AnalysisException =>
          throw IndexTablesErrors.invalidMergeWhere(table, predicate, e.getSimpleMessage)
      }
    val types = partSchema.fields.map(_.dataType)
    val test = Predicate.createInterpreted(bound)
    values => {
      val row = InternalRow.fromSeq(partitionColumns.zip(types).map { case (c, t) =>
        PartitionValues.decode(values.getOrElse(c, null), t, timeZone)
      })
      test.synchronized(test.eval(row))
    }
  }
}
