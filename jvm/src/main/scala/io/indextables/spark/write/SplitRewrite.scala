package io.indextables.spark.write

import java.util.Locale

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.functions.lit
import org.apache.spark.sql.indextables.SparkLineShim
import org.apache.spark.sql.{Column, SparkSession}

import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.schema.TableIndexing
import io.indextables.spark.transaction.{AddAction, Snapshot}

/**
 * Writes again the rows of some splits of a table, as new splits, without committing them: the
 * rows are read at `snapshot` (so deleted rows stay out, and a concurrent commit changes nothing
 * read) and written by the table's own data writer under `plan`, in one Spark job. A replaceWhere
 * keeps with it the rows its predicate does not replace; MERGE SPLITS drops the deleted rows of
 * splits with deletion vectors. The caller commits the new splits, or deletes them.
 */
object SplitRewrite {

  /**
   * The rows of `splits` at `snapshot` that `keep` selects, written as new splits with the
   * columns of `plan.writeSchema` (a column the table did not have yet reads as NULL).
   */
  def rewrite(
      plan: WritePlan,
      snapshot: Snapshot,
      splits: Seq[AddAction],
      fileSystemOptions: Map[String, String],
      keep: Option[Column]): Seq[AddAction] = {
    val spark = SparkSession.active
    val had = TableIndexing.tableSchema(snapshot).fieldNames.map(_.toLowerCase(Locale.ROOT)).toSet
    val columns = plan.writeSchema.fields.toSeq.map { f =>
      if (had.contains(f.name.toLowerCase(Locale.ROOT)))
        SparkLineShim.column(UnresolvedAttribute(Seq(f.name)))
      else lit(null).cast(f.dataType).as(f.name)
    }
    val read = spark.read.format("indextables")
      .options(fileSystemOptions)
      .option("versionAsOf", snapshot.version.toString)
      .option(IndexTablesOptions.OnlySplitsOption, splits.map(_.path).mkString("\n"))
      .load(plan.tablePath)
    val rows = keep.map(read.where).getOrElse(read).select(columns: _*)
    val writePlan = plan.copy(rowCheck = None)
    val written = rows.queryExecution.toRdd.mapPartitionsWithIndex { (i, it) =>
      val writer =
        new IndexTables4SparkDataWriter(writePlan, i, TaskContext.get().taskAttemptId())
      try {
        it.foreach(writer.write)
        Iterator(writer.commit())
      } catch {
        case e: Throwable =>
          writer.abort()
          throw e
      } finally writer.close()
    }.collect()
    written.toSeq.flatMap {
      case IndexTablesCommitMessage(adds, _, _) => adds
      case _ => Nil
    }
  }
}
