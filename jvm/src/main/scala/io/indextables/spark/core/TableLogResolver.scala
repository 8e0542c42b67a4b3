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

  /**
   * The snapshot a read asks for: `versionAsOf` or `timestampAsOf` (time travel), else the
   * latest. None when `path` holds no table.
   */
  def loadForRead(path: String, options: util.Map[String, String]): Option[Snapshot] = {
    val m = options.asScala.map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }
    (m.get("versionasof"), m.get("timestampasof")) match {
      case (None, None) => load(path, options)
      case (Some(_), Some(_)) => throw IndexTablesErrors.bothTimeTravelOptions()
      case (Some(v), None) =>
        val version = scala.util.Try(v.trim.toLong).toOption.filter(_ >= 0)
          .getOrElse(throw IndexTablesErrors.invalidOption("versionAsOf", v,
            new IllegalArgumentException("expected a non-negative version number")))
        Some(log(path, options).snapshotAt(version))
      case (None, Some(ts)) =>
        val millis = parseTimestamp(ts)
        val l = log(path, options)
        Some(l.snapshotAt(l.versionAsOfTimestamp(millis, ts)))
    }
  }

  /** A timestamp option: epoch milliseconds, or a date/timestamp in the session time zone. */
  private def parseTimestamp(ts: String): Long = {
    val t = ts.trim
    if (t.nonEmpty && t.forall(_.isDigit)) t.toLong
    else {
      val spark = SparkSession.active
      val zone = java.time.ZoneId.of(spark.sessionState.conf.sessionLocalTimeZone)
      org.apache.spark.sql.catalyst.util.DateTimeUtils
        .stringToTimestamp(org.apache.spark.unsafe.types.UTF8String.fromString(t), zone)
        .map(micros => Math.floorDiv(micros, 1000L))
        .getOrElse(throw IndexTablesErrors.invalidOption("timestampAsOf", ts,
          new IllegalArgumentException("expected a timestamp such as 2024-01-01 12:00:00")))
    }
  }

  def sessionConf(spark: SparkSession): Map[String, String] =
    spark.conf.getAll.filter(_._1.startsWith("spark.indextables."))
}
