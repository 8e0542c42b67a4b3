package io.indextables.spark.sql.commands

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.core.{IndexTables4SparkTable, TableLogResolver}
import io.indextables.spark.transaction.TransactionLog

/** What a command names: a table path (`'<path>'`) or a table or view name (`<table>`). */
sealed trait IndexTablesCommandTarget {

  /** The table's path; a name must resolve to exactly one IndexTables table. Driver side. */
  def resolvePath(spark: SparkSession): String

  /** The table's transaction log, which must exist. */
  def log(spark: SparkSession): TransactionLog = {
    val path = resolvePath(spark)
    val log = TableLogResolver.log(path, Map.empty[String, String])
    if (!log.exists) throw IndexTablesErrors.tableNotFound(path)
    log
  }
}

object IndexTablesCommandTarget {
  final case class TablePath(path: String) extends IndexTablesCommandTarget {
    override def resolvePath(spark: SparkSession): String = path
  }

  final case class TableName(nameParts: Seq[String]) extends IndexTablesCommandTarget {
    override def resolvePath(spark: SparkSession): String = {
      val name = nameParts.map(p => s"`${p.replace("`", "``")}`").mkString(".")
      val tables = spark.table(name).queryExecution.analyzed.collect {
        case r: DataSourceV2Relation if r.table.isInstanceOf[IndexTables4SparkTable] =>
          r.table.asInstanceOf[IndexTables4SparkTable].tablePath
      }.distinct
      tables match {
        case Seq(path) => path
        case _ => throw IndexTablesErrors.commandTargetNotIndexTables(nameParts.mkString("."))
      }
    }
  }
}
