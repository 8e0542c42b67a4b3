package io.indextables.spark.write

import org.apache.spark.sql.sources.Filter

/**
 * Which rows of the table a write replaces, decided on the driver before any task starts.
 * Each mode names its operation and parameters for the commit record (see
 * io.indextables.spark.transaction.CommitInfo), as Delta's commitInfo names them.
 */
sealed trait WriteMode {
  def operation: String
  def parameters: Map[String, String]
}

object WriteMode {

  /** Adds the rows; replaces nothing. */
  case object Append extends WriteMode {
    val operation = "WRITE"
    val parameters: Map[String, String] = Map("mode" -> "Append")
  }

  /** Replaces the whole table (schema and partitioning may change). */
  case object Truncate extends WriteMode {
    val operation = "OVERWRITE"
    val parameters: Map[String, String] = Map("mode" -> "Overwrite")
  }

  /**
   * Replaces the rows that satisfy `filters` (all of them), as Delta's replaceWhere: splits
   * whose rows all match are removed, splits with rows on both sides are rewritten without the
   * matching rows, and every written row must match.
   *
   * @param predicate the predicate as the user gave it, for messages and the commit record
   */
  final case class ReplaceWhere(predicate: String, filters: Seq[Filter]) extends WriteMode {
    val operation = "REPLACE WHERE"
    def parameters: Map[String, String] = Map("mode" -> "Overwrite", "predicate" -> predicate)
  }

  /** Replaces the partitions the written rows fall in (dynamic partition overwrite). */
  case object DynamicPartitions extends WriteMode {
    val operation = "OVERWRITE PARTITIONS"
    val parameters: Map[String, String] =
      Map("mode" -> "Overwrite", "partitionOverwriteMode" -> "dynamic")
  }
}
