package io.indextables.spark.core

import java.util

import scala.collection.JavaConverters._

import org.apache.spark.sql.SparkSession

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.transaction.{Snapshot, TransactionLog}

/** Driver-side lookups of a table's log by path and options. */
object TableState {
  def path(options: util.Map[String, String]): String = {
    val m = options.asScala
    m.get("path").orElse(m.collectFirst { case (k, v) if k.equalsIgnoreCase("path") => v })
      .getOrElse(throw IndexTablesErrors.pathRequired())
  }

  def log(path: String, options: util.Map[String, String]): TransactionLog = {
    val spark = SparkSession.active
    val opts = options.asScala.toMap
    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(opts)
    TransactionLog.forTable(path, hadoopConf, sessionConf(spark) ++ opts)
  }

  /** The latest snapshot, or None when `path` holds no table. */
  def load(path: String, options: util.Map[String, String]): Option[Snapshot] = {
    val l = log(path, options)
    if (l.exists) Some(l.snapshot()) else None
  }

  def sessionConf(spark: SparkSession): Map[String, String] =
    spark.conf.getAll.filter(_._1.startsWith("spark.indextables."))
}
