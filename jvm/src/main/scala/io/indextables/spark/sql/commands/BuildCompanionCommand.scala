package io.indextables.spark.sql.commands

import java.util.Locale

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{IntegerType, LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.{ConfEntry, IndexTablesConf}
import io.indextables.spark.core.TableLogResolver
import io.indextables.spark.lake.{IcebergTableRef, Libraries}
import io.indextables.spark.storage.LogStore
import io.indextables.spark.sync._
import io.indextables.spark.write.CompanionWrite

/** The clauses of a BUILD INDEXTABLES COMPANION as written (None: not given). */
final case class BuildCompanionOptions(
    includeColumns: Option[Seq[String]] = None,
    excludeColumns: Option[Seq[String]] = None,
    indexingModes: Option[Seq[(String, String)]] = None,
    fastFieldsMode: Option[String] = None,
    targetInputSize: Option[String] = None,
    writerHeapSize: Option[String] = None,
    where: Option[String] = None,
    fromVersion: Option[String] = None,
    fromSnapshot: Option[String] = None,
    catalog: Option[String] = None,
    warehouse: Option[String] = None,
    streamingPollInterval: Option[(String, String)] = None)

/**
 * `BUILD INDEXTABLES COMPANION FOR PARQUET '<dir>' AT LOCATION '<index>' [clauses] [DRY RUN]`
 * (the clauses may also come before AT LOCATION, as upstream writes them): indexes a directory
 * of Parquet files, Hive-partitioned or not, into a companion index at `<index>` without copying
 * a row, and brings it up to date when run again (see [[CompanionSync]]). The index is
 * read-only: its rows are the source's. Clauses:
 *  - `INCLUDE COLUMNS (a, b)` / `EXCLUDE COLUMNS (c)`: the data columns indexed (all by
 *    default); the others stay readable from Parquet, never searched;
 *  - `INDEXING MODES (col: 'text', ...)`: text, string (the default), json or ip per string
 *    column;
 *  - `FASTFIELDS MODE DISABLED | HYBRID | PARQUET_ONLY` (default DISABLED);
 *  - `TARGET INPUT SIZE <size>` (Parquet bytes per split, default 2G), `WRITER HEAP SIZE
 *    <size>` (default `spark.indextables.indexWriter.heapSize`), sizes in bytes or with K, M,
 *    G or T;
 *  - `WHERE <partition predicate>`: only matching partitions are indexed or have splits removed;
 *  - `WITH STREAMING POLL INTERVAL n SECONDS | MINUTES`: syncs again every interval until
 *    stopped (see [[CompanionStream]]); the command then returns a row for each sync that
 *    committed.
 *
 * One row, upstream's columns: table_path, source_path, status (success | no_action |
 * dry_run), source_version (null: a directory has none), splits_created, splits_invalidated,
 * parquet_files_indexed, parquet_bytes_indexed, split_bytes_uploaded, duration_ms, message,
 * and version (the version committed, null if none).
 */
case class BuildCompanionCommand(
    sourceFormat: String,
    source: String,
    location: String,
    options: BuildCompanionOptions,
    dryRun: Boolean)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("table_path", StringType, nullable = false)(),
    AttributeReference("source_path", StringType, nullable = false)(),
    AttributeReference("status", StringType, nullable = false)(),
    AttributeReference("source_version", LongType)(),
    AttributeReference("splits_created", IntegerType, nullable = false)(),
    AttributeReference("splits_invalidated", IntegerType, nullable = false)(),
    AttributeReference("parquet_files_indexed", IntegerType, nullable = false)(),
    AttributeReference("parquet_bytes_indexed", LongType, nullable = false)(),
    AttributeReference("split_bytes_uploaded", LongType, nullable = false)(),
    AttributeReference("duration_ms", LongType, nullable = false)(),
    AttributeReference("message", StringType)(),
    AttributeReference("version", LongType)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val start = System.currentTimeMillis()
    val opts = TableLogResolver.settings(Map.empty)
    // Clauses are checked before anything is listed, so a bad value never waits for storage.
    val request = BuildCompanionCommand.request(
      sourceFormat,
      options,
      dryRun,
      opts.get(
        IndexTablesConf.WriterHeapSize))
    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)
    val log = TableLogResolver.log(location, opts)
    // A source lists its table once: each sync of a stream takes a new one.
    def sync() = CompanionSync.run(
      spark,
      log,
      sourceOf(spark, request, hadoopConf),
      request,
      hadoopConf,
      opts.get(IndexTablesConf.StatsTruncationMaxLength))
    val results = request.pollIntervalMs match {
      case None => Seq(sync())
      case Some(interval) => CompanionStreams.run(
          log.tablePath.toString,
          interval,
          opts.get(IndexTablesConf.CompanionStreamMaxConsecutiveErrors),
          () => spark.sparkContext.isStopped)(() => sync())
    }
    results.map(r =>
      Row(
        r.indexPath,
        r.sourcePath,
        r.status,
        r.sourceVersion.map(Long.box).orNull,
        r.splitsCreated,
        r.splitsInvalidated,
        r.filesIndexed,
        r.bytesIndexed,
        r.splitBytes,
        if (results.size == 1) System.currentTimeMillis() - start else r.durationMs,
        r.message,
        r.version.map(Long.box).orNull
      ))
  }

  private def sourceOf(
      spark: SparkSession,
      request: CompanionBuildRequest,
      hadoopConf: Configuration): CompanionSource = {
    val sqlConf = spark.sessionState.conf
    def root = LogStore.qualify(new Path(source), hadoopConf)
    request.sourceFormat match {
      case Libraries.DeltaFormat =>
        if (!Libraries.deltaAvailable) throw IndexTablesErrors
          .companionSourceLibraryMissing("delta", Libraries.deltaLibrary)
        new DeltaTableSource(spark, root, request.fromVersion, sqlConf.sessionLocalTimeZone)
      case Libraries.IcebergFormat =>
        Libraries.checkIcebergSparkLine()
        if (!Libraries.icebergAvailable) throw IndexTablesErrors.companionSourceLibraryMissing(
          "iceberg",
          Libraries.icebergLibrary)
        new IcebergTableSource(
          spark,
          IcebergTableRef(source, options.catalog, options.warehouse),
          request.fromVersion,
          hadoopConf)
      case _ => new ParquetDirectorySource(
          root,
          hadoopConf,
          sqlConf.sessionLocalTimeZone,
          sqlConf.partitionColumnTypeInferenceEnabled)
    }
  }
}

object BuildCompanionCommand {

  /**
   * Stops the stream (WITH STREAMING POLL INTERVAL) that syncs the index at `location`, a path
   * or table name as the command takes it, after its current sync; whether one was running.
   */
  def stopStream(location: String): Boolean =
    CompanionStreams.stop(TableLogResolver.log(location, TableLogResolver.settings(Map.empty))
      .tablePath.toString)

  /** The least WRITER HEAP SIZE tantivy4java takes. */
  val MinHeapSize: Long = 15000000L

  private val SizeHint = "bytes, or a number with K, M, G or T (2G)"

  /** The build `options` ask for, every clause checked; fails naming the first bad one. */
  def request(
      sourceFormat: String,
      options: BuildCompanionOptions,
      dryRun: Boolean,
      defaultHeapSize: Long): CompanionBuildRequest = {
    val format = sourceFormat.toLowerCase(Locale.ROOT)
    if (!Set("parquet", Libraries.DeltaFormat, Libraries.IcebergFormat).contains(format))
      throw IndexTablesErrors.companionInvalidOption(
        "source format",
        sourceFormat,
        "PARQUET (a directory of Parquet files), DELTA (a Delta Lake table) or ICEBERG (an " +
          "Apache Iceberg table)")
    def only(clause: String, value: Option[String], of: String) = value.foreach { v =>
      if (format != of) throw IndexTablesErrors.companionInvalidOption(
        clause,
        v,
        s"a clause of FOR ${of.toUpperCase(Locale.ROOT)} only")
    }
    only("FROM VERSION", options.fromVersion, Libraries.DeltaFormat)
    only("FROM SNAPSHOT", options.fromSnapshot, Libraries.IcebergFormat)
    only("CATALOG", options.catalog, Libraries.IcebergFormat)
    only("WAREHOUSE", options.warehouse, Libraries.IcebergFormat)
    if (options.catalog.isDefined && options.warehouse.isDefined) throw IndexTablesErrors
      .companionInvalidOption(
        "WAREHOUSE",
        options.warehouse.get,
        "not with CATALOG: a catalog knows its warehouse")
    val pollIntervalMs = options.streamingPollInterval.map { case (n, unit) =>
      val clause = "WITH STREAMING POLL INTERVAL"
      val ms = scala.util.Try(BigInt(n)).toOption
        .map(_ * (if (unit.equalsIgnoreCase("MINUTES")) 60000 else 1000))
        .filter(v => v >= 1000 && v <= BigInt(7L * 24 * 3600 * 1000))
        .getOrElse(throw IndexTablesErrors.companionInvalidOption(
          clause,
          s"$n $unit",
          "an interval from 1 second to 7 days"))
      if (dryRun) throw IndexTablesErrors.companionInvalidOption(
        clause,
        s"$n $unit",
        "not with DRY RUN, which commits nothing to follow")
      options.fromVersion.orElse(options.fromSnapshot).foreach { v =>
        throw IndexTablesErrors.companionInvalidOption(
          clause,
          s"$n $unit",
          s"not with FROM ${if (options.fromVersion.isDefined) "VERSION" else "SNAPSHOT"} $v: " +
            "a stream follows the source's latest version")
      }
      ms.toLong
    }
    // The source version asked for: a Delta version or an Iceberg snapshot id.
    val fromVersion = options.fromVersion.map(v =>
      scala.util.Try(v.toLong).toOption.getOrElse(
        throw IndexTablesErrors.companionInvalidOption("FROM VERSION", v, "a version number")))
      .orElse(options.fromSnapshot.map(v =>
        scala.util.Try(v.toLong).toOption.getOrElse(
          throw IndexTablesErrors.companionInvalidOption("FROM SNAPSHOT", v, "a snapshot id"))))
    options.indexingModes.getOrElse(Nil).foreach { case (column, mode) =>
      if (!CompanionBuildRequest.Modes.contains(mode.toLowerCase(Locale.ROOT)))
        throw IndexTablesErrors.companionUnknownIndexingMode(column, mode)
    }
    val fastFieldMode = options.fastFieldsMode.map { m =>
      Some(m.toUpperCase(Locale.ROOT)).filter(CompanionWrite.FastFieldModes.contains)
        .getOrElse(throw IndexTablesErrors.companionInvalidOption(
          "FASTFIELDS MODE",
          m,
          CompanionWrite.FastFieldModes.mkString(" or ") + " (PARQUET_ONLY is not offered: " +
            "tantivy4java 0.31.0's decoding of every fast field from Parquet answered some " +
            "filters wrongly)"
        ))
    }
    def size(clause: String, value: String, min: Long) =
      ConfEntry.parseBytes(value).filter(_ >= min).getOrElse(
        throw IndexTablesErrors.companionInvalidOption(
          clause,
          value,
          s"a size of at least $min $SizeHint"))
    CompanionBuildRequest(
      options.includeColumns,
      options.excludeColumns,
      options.indexingModes,
      fastFieldMode,
      options.targetInputSize.map(size("TARGET INPUT SIZE", _, 1L))
        .getOrElse(CompanionBuildRequest.DefaultTargetInputSize),
      options.writerHeapSize.map(size(
        "WRITER HEAP SIZE",
        _,
        MinHeapSize)).getOrElse(defaultHeapSize),
      options.where.filter(_.trim.nonEmpty),
      dryRun,
      format,
      fromVersion,
      pollIntervalMs
    )
  }
}
