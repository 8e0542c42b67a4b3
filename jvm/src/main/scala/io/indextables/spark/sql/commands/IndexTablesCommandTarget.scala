package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.analysis.NoSuchTableException
import org.apache.spark.sql.execution.datasources.v2.{BatchScanExec, DataSourceV2Relation}
import org.apache.spark.sql.indextables.SparkLineShim
import org.apache.spark.sql.{AnalysisException, DataFrame, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.core.{IndexTables4SparkTable, TableLogResolver}
import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.schema.TableIndexing
import io.indextables.spark.filters.PartitionPredicate
import io.indextables.spark.read.IndexTables4SparkScan
import io.indextables.spark.transaction.TransactionLog

/**
 * What a command names: a table path (`'<path>'`) or a table or view name (`<table>`, resolved
 * through the session's catalogs, IndexTables4SparkCatalog's tables included).
 */
sealed abstract class IndexTablesCommandTarget {

  /** The table's path; a name must resolve to exactly one IndexTables table. Driver side. */
  def resolvePath(spark: SparkSession): String

  /** The table as a read of it: a DataFrame over the latest version. */
  def read(spark: SparkSession): DataFrame

  /**
   * The scan a read of the table plans, over the splits whose partitions match `where` (a Spark
   * SQL predicate that may name partition columns only, a [[PartitionPredicate]]: `command`
   * names the command in the error otherwise). Its splits, groups and read plan are what a query would use.
   */
  def plannedScan(spark: SparkSession, where: Option[String], command: String)
      : IndexTables4SparkScan = {
    // The splits the WHERE clause keeps, by the one partition predicate; the read takes them.
    val only = where.map { text =>
      val snapshot = log(spark).snapshot()
      val partitionColumns = snapshot.metadata.partitionColumns
      val predicate = PartitionPredicate.parse(
        spark,
        text,
        TableIndexing.tableSchema(snapshot),
        partitionColumns,
        spark.sessionState.conf.sessionLocalTimeZone,
        PartitionPredicate.Errors(
          why => IndexTablesErrors.invalidPartitionPredicate(command, text, why),
          _ => IndexTablesErrors.partitionPredicateRequired(command, text, partitionColumns))
      )
      snapshot.allFiles.filter(a => predicate.matches(a.partitionValues)).map(_.path)
    }
    log(spark)
    // The index route, also on a companion table, whose plain scan would read Parquet; by
    // tasks, as the command plans them (a small search would be read here, on the driver).
    val reader = spark.read.format("indextables")
      .option(IndexTablesOptions.IndexRouteOption, "true")
      .option(IndexTablesConf.DriverSearchMaxRows.key, "0")
    val filtered = only.fold(reader)(paths =>
      reader.option(IndexTablesOptions.OnlySplitsOption, paths.mkString("\n")))
      .load(resolvePath(spark))
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

  /** The target as a command's SQL names it: a quoted string or a quoted multi-part name. */
  def sql: String
}

object IndexTablesCommandTarget {
  final case class TablePath(path: String) extends IndexTablesCommandTarget {
    override def resolvePath(spark: SparkSession): String = path
    override def sql: String = "'" + path.replace("\\", "\\\\").replace("'", "\\'") + "'"

    override def read(spark: SparkSession): DataFrame = {
      log(spark)
      spark.read.format("indextables").load(path)
    }
  }

  final case class TableName(nameParts: Seq[String]) extends IndexTablesCommandTarget {
    override def sql: String = nameParts.map(p => s"`${p.replace("`", "``")}`").mkString(".")

    override def read(spark: SparkSession): DataFrame = {
      resolvePath(spark)
      spark.table(sql)
    }

    override def toString: String = nameParts.mkString(".")

    override def resolvePath(spark: SparkSession): String = {
      val plan =
        try spark.table(sql).queryExecution.analyzed
        catch {
          case _: NoSuchTableException =>
            throw IndexTablesErrors.noSuchTable(nameParts.mkString("."))
          case e: AnalysisException if SparkLineShim.errorClass(e) == "TABLE_OR_VIEW_NOT_FOUND" =>
            throw IndexTablesErrors.noSuchTable(nameParts.mkString("."))
        }
      val tables = plan.collect {
        case r: DataSourceV2Relation if r.table.isInstanceOf[IndexTables4SparkTable] =>
          r.table.asInstanceOf[IndexTables4SparkTable].tablePath
      }.distinct
      tables match {
        case Seq(path) => path
        case _ => throw IndexTablesErrors.commandTargetNotIndexTables(nameParts.mkString("."))
      }
    }
  }

  /**
   * The table at `path`, which must exist (for callers outside SQL, such as the Python
   * `IndexTable`, which then issue the commands' SQL with [[IndexTablesCommandTarget.sql]]).
   */
  def forPath(spark: SparkSession, path: String): IndexTablesCommandTarget = {
    val target = TablePath(path)
    target.log(spark)
    target
  }

  /** The table a name as SQL writes it (`db.logs`, `` `my table` ``) names; it must exist. */
  def forName(spark: SparkSession, name: String): IndexTablesCommandTarget = {
    val target = TableName(spark.sessionState.sqlParser.parseMultipartIdentifier(name))
    target.log(spark)
    target
  }
}
