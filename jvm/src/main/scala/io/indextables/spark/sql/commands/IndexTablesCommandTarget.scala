package io.indextables.spark.sql.commands

import org.apache.spark.sql.execution.datasources.v2.{BatchScanExec, DataSourceV2Relation}
import org.apache.spark.sql.{Column, DataFrame, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.core.{IndexTables4SparkTable, TableLogResolver}
import io.indextables.spark.read.IndexTables4SparkScan
import io.indextables.spark.transaction.TransactionLog

/** What a command names: a table path (`'<path>'`) or a table or view name (`<table>`). */
sealed trait IndexTablesCommandTarget {

  /** The table's path; a name must resolve to exactly one IndexTables table. Driver side. */
  def resolvePath(spark: SparkSession): String

  /** The table as a read of it: a DataFrame over the latest version. */
  def read(spark: SparkSession): DataFrame

  /**
   * The scan a read of the table plans, over the splits whose partitions match `where` (a Spark
   * SQL predicate that may name partition columns only: `command` names the command in the
   * error otherwise). Its splits, groups and read plan are what a query would use.
   */
  def plannedScan(spark: SparkSession, where: Option[String], command: String)
      : IndexTables4SparkScan = {
    val df = read(spark)
    val filtered = where.fold(df) { text =>
      val partitionColumns = log(spark).snapshot().metadata.partitionColumns
      val condition = spark.sessionState.sqlParser.parseExpression(text)
      val outside = condition.references.map(_.name).filterNot(n =>
        partitionColumns.exists(_.equalsIgnoreCase(n)))
      if (outside.nonEmpty) {
        throw IndexTablesErrors.partitionPredicateRequired(command, text, partitionColumns)
      }
      df.where(new Column(condition))
    }
    filtered.queryExecution.sparkPlan.collect {
      case b: BatchScanExec if b.scan.isInstanceOf[IndexTables4SparkScan] =>
        b.scan.asInstanceOf[IndexTables4SparkScan]
    } match {
      case Seq(scan) => scan
      case _ => throw IndexTablesErrors.commandTargetNotIndexTables(toString)
    }
  }

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

    override def read(spark: SparkSession): DataFrame = {
      log(spark)
      spark.read.format("indextables").load(path)
    }
  }

  final case class TableName(nameParts: Seq[String]) extends IndexTablesCommandTarget {
    private def quoted: String = nameParts.map(p => s"`${p.replace("`", "``")}`").mkString(".")

    override def read(spark: SparkSession): DataFrame = spark.table(quoted)

    override def toString: String = nameParts.mkString(".")

    override def resolvePath(spark: SparkSession): String = {
      val tables = spark.table(quoted).queryExecution.analyzed.collect {
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
