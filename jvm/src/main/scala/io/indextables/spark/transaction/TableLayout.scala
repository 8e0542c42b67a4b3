package io.indextables.spark.transaction

import io.indextables.spark.IndexTablesErrors

/**
 * How a table stores its rows: in its splits (tantivy's document store), or in Parquet files
 * that its index-only splits index (the companion layout, protocol feature
 * [[TableFeatures.CompanionLayout]]). Chosen when a table is created, never changed.
 */
sealed abstract class TableLayout(val name: String) {

  /** The protocol features a table of this layout requires. */
  def features: Set[String]
}

object TableLayout {
  case object Splits extends TableLayout("splits") { val features: Set[String] = Set.empty }

  case object Companion extends TableLayout("companion") {
    val features: Set[String] = Set(TableFeatures.CompanionLayout)
  }

  /** The layout named by `spark.indextables.write.layout` (already validated). */
  def apply(name: String): TableLayout = if (name == Companion.name) Companion else Splits

  def of(protocol: ProtocolAction): TableLayout =
    if (TableFeatures.isCompanion(protocol)) Companion else Splits

  /** Upstream's metadata key saying a table's splits index Parquet files. */
  val CompanionEnabledKey = "indextables.companion.enabled"

  /** Upstream's metadata key naming the root of an external source's Parquet files. */
  val SourceTablePathKey = "indextables.companion.sourceTablePath"

  /**
   * Ours: `directory` when each split's own Parquet manifest names its files relative to their
   * directory (the one directory all of a split's files are in), not to the table's Parquet
   * root. tantivy4java 0.31.0's disk cache keys a Parquet file's bytes by its storage root and
   * file name, so same-named files in two partition directories of one root (as every Spark
   * job writes them: `part-00000-<job>.c000.snappy.parquet` in each partition) served each
   * other's bytes once the disk cache was on in the JVM; under its own directory a file's name
   * is unique. Indexes built over external Parquet record it; absent, the root.
   */
  val ParquetPathsKey = "indextables.companion.parquetPathsRelativeTo"
  val ParquetPathsFromDirectory = "directory"

  def parquetPathsFromDirectory(snapshot: Snapshot): Boolean =
    snapshot.metadata.configuration.get(ParquetPathsKey).contains(ParquetPathsFromDirectory)

  /**
   * The one directory (relative, `/`-separated, "" for the root) that holds every file of
   * `files` (paths relative to a root); None when they lie in more than one.
   */
  def directoryOf(files: Seq[String]): Option[String] =
    files.map(f => f.substring(0, math.max(0, f.lastIndexOf('/')))).distinct match {
      case Seq(one) => Some(one)
      case _ => None
    }

  /** Upstream's metadata key of the format of a companion index's source (`parquet`, `delta`). */
  val SourceFormatKey = "indextables.companion.sourceFormat"

  /** Upstream's metadata key of the fast field mode a companion table's splits are built with. */
  val FastFieldModeKey = "indextables.companion.fastFieldMode"

  /**
   * Where the Parquet files of a companion table's splits are, relative to which its add
   * actions name them: the table itself, or an external source's root (an index built over
   * Parquet files it does not own).
   */
  def parquetRoot(snapshot: Snapshot): org.apache.hadoop.fs.Path =
    snapshot.metadata.configuration.get(SourceTablePathKey) match {
      case Some(root) => new org.apache.hadoop.fs.Path(root)
      case None => snapshot.tablePath
    }

  /**
   * Fails, naming the source, for a companion index of files the table does not own: its rows
   * change only with its source's.
   */
  def checkWritable(snapshot: Snapshot, table: String): Unit = {
    val conf = snapshot.metadata.configuration
    conf.get(SourceTablePathKey).foreach { source =>
      throw IndexTablesErrors.companionIndexReadOnly(
        table,
        source,
        conf.getOrElse(SourceFormatKey, "parquet"))
    }
  }

  /** Upstream's metadata key of the source table's version a companion index reflects. */
  val SourceVersionKey = "indextables.companion.lastSyncedVersion"

  /**
   * The external source a companion index reflects, as plans and DESCRIBE show it
   * (`delta /data/events at version 12`); None for a table that owns its rows.
   */
  def sourceOf(snapshot: Snapshot): Option[String] = {
    val conf = snapshot.metadata.configuration
    conf.get(SourceTablePathKey).map { root =>
      val format = conf.getOrElse(SourceFormatKey, "parquet")
      s"$format $root" + conf.get(SourceVersionKey).fold("")(v => s" at ${versionWord(format)} $v")
    }
  }

  /** What a source format calls its versions: an Iceberg table's are snapshots. */
  def versionWord(sourceFormat: String): String =
    if (sourceFormat == "iceberg") "snapshot" else "version"

  /**
   * What a companion table records in its metadata's configuration, under upstream's keys for
   * companion indexes: its splits index Parquet files, kept under the table itself.
   */
  def companionConfiguration(fastFieldMode: String): Map[String, String] = Map(
    CompanionEnabledKey -> "true",
    SourceFormatKey -> "parquet",
    FastFieldModeKey -> fastFieldMode
  )
}
