package io.indextables.spark.core

import java.util.Locale

import scala.util.Try

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.transaction.{Snapshot, TransactionLog}

/**
 * Resolves a table path and options to the table's transaction log and to the snapshot a read
 * asks for (the latest, or a `versionAsOf` / `timestampAsOf` one). Settings are resolved with
 * [[IndexTablesOptions]]: the given options over the session configuration. Driver side.
 */
object TableLogResolver {

  /** The table path among `options` (`path`, any case); fails when there is none. */
  def path(options: Map[String, String]): String =
    options.collectFirst { case (k, v) if k.equalsIgnoreCase("path") => v }
      .getOrElse(throw IndexTablesErrors.pathRequired())

  /** `options` over the session's `spark.indextables.*` configuration. */
  def settings(options: Map[String, String]): IndexTablesOptions =
    IndexTablesOptions(options, sessionConf(SparkSession.active))

  /** A handle of the log at `path`, working with the log settings `opts` resolve to. */
  def log(path: String, opts: IndexTablesOptions): TransactionLog = {
    val hadoopConf = SparkSession.active.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)
    TransactionLog.forTable(path, hadoopConf, opts.logSettings, opts.fileSystemOptions)
  }

  def log(path: String, options: Map[String, String]): TransactionLog =
    log(path, settings(options))

  /** The latest snapshot, or None when `path` holds no table. */
  def load(path: String, options: Map[String, String]): Option[Snapshot] = {
    val l = log(path, options)
    if (l.exists) Some(l.snapshot()) else None
  }

  /** The latest snapshot; fails, naming the path, when `path` holds no table. */
  def loadExisting(path: String, options: Map[String, String]): Snapshot =
    load(path, options).getOrElse(throw IndexTablesErrors.tableNotFound(path))

  /**
   * The snapshot a read asks for: `versionAsOf` or `timestampAsOf` (time travel), else the
   * latest. None when `path` holds no table.
   */
  def loadForRead(path: String, options: Map[String, String]): Option[Snapshot] = {
    val m = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    (m.get("versionasof"), m.get("timestampasof")) match {
      case (None, None) => load(path, options)
      case (Some(_), Some(_)) => throw IndexTablesErrors.bothTimeTravelOptions()
      case (Some(v), None) =>
        val version = Try(v.trim.toLong).toOption.filter(_ >= 0)
          .getOrElse(throw IndexTablesErrors.invalidOption(
            "versionAsOf",
            v,
            "a non-negative version number"))
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
      val zone = java.time.ZoneId.of(SparkSession.active.sessionState.conf.sessionLocalTimeZone)
      DateTimeUtils.stringToTimestamp(UTF8String.fromString(t), zone)
        .map(micros => Math.floorDiv(micros, 1000L))
        .getOrElse(throw IndexTablesErrors.invalidOption(
          "timestampAsOf",
          ts,
          "a timestamp such as 2024-01-01 12:00:00, or epoch milliseconds"))
    }
  }

  /** The session configuration's `spark.indextables.*` entries, with their keys as set. */
  def sessionConf(spark: SparkSession): Map[String, String] =
    spark.conf.getAll.filter(_._1.toLowerCase(Locale.ROOT).startsWith("spark.indextables."))
}
