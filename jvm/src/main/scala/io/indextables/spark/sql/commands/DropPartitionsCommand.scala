package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.TableIndexing
import io.indextables.spark.filters.PartitionPredicate
import io.indextables.spark.transaction.AddAction

/**
 * `DROP INDEXTABLES PARTITIONS FROM '<path>' | <table> WHERE <predicate>`: removes, in one
 * commit, every live split whose partition the predicate is TRUE for (not FALSE, not NULL). The
 * predicate is Spark SQL on partition columns only, compared with the columns' types (`hour > 9`
 * on an int partition compares numbers; `day >= '2024-01-02'` on a date partition compares
 * dates). The split files stay on storage for time travel until PURGE INDEXTABLE deletes them.
 *
 * One row: table_path string, status string (success | no_action), partitions_dropped long,
 * splits_removed long, total_size_bytes long, message string, as upstream's.
 */
case class DropPartitionsCommand(target: IndexTablesCommandTarget, predicate: Option[String])
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("table_path", StringType, nullable = false)(),
    AttributeReference("status", StringType, nullable = false)(),
    AttributeReference("partitions_dropped", LongType, nullable = false)(),
    AttributeReference("splits_removed", LongType, nullable = false)(),
    AttributeReference("total_size_bytes", LongType, nullable = false)(),
    AttributeReference("message", StringType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val log = target.log(spark)
    val table = log.tablePath.toString
    val where = predicate.map(_.trim).getOrElse("")
    def invalid(why: String) = IndexTablesErrors.invalidDropPartitions(table, where, why)
    if (where.isEmpty) {
      throw invalid("a WHERE clause on partition columns is required (PURGE INDEXTABLE " +
        "deletes unreferenced files; an overwrite replaces the whole table)")
    }
    val snapshot = log.snapshot()
    val partitionColumns = snapshot.metadata.partitionColumns
    if (partitionColumns.isEmpty) throw invalid("the table is not partitioned")
    val schema = TableIndexing.tableSchema(snapshot)
    val errors = PartitionPredicate.Errors(
      invalid,
      columns =>
        invalid(s"${columns.mkString(", ")} ${
            if (columns.size == 1) "is not a partition column" else "are not partition columns"
          }; the partition columns are ${partitionColumns.mkString(", ")}")
    )
    val partitionTest = PartitionPredicate.parse(
      spark,
      where,
      schema,
      partitionColumns,
      spark.sessionState.conf.sessionLocalTimeZone,
      errors)
    def matching(files: Seq[AddAction]) =
      files.filter(a => partitionTest.matches(a.partitionValues))

    var dropped: Seq[AddAction] = Nil
    val current = matching(snapshot.allFiles)
    if (current.isEmpty) {
      return Seq(Row(table, "no_action", 0L, 0L, 0L, s"No partition matches WHERE $where"))
    }
    val version = log.startTransaction().commit("DROP PARTITIONS", Map("predicate" -> where)) {
      base =>
        dropped = matching(base.map(_.allFiles).getOrElse(Nil))
        val now = System.currentTimeMillis()
        dropped.map(a =>
          a.removed(now, dataChange = true))
    }
    val partitions = dropped.map(_.partitionValues).distinct.size.toLong
    val bytes = dropped.map(_.size).sum
    Seq(Row(
      table,
      "success",
      partitions,
      dropped.size.toLong,
      bytes,
      s"Dropped $partitions partitions (${dropped.size} splits, $bytes bytes) in version " +
        s"$version; PURGE INDEXTABLE deletes the files once they are past its retention"
    ))
  }
}
