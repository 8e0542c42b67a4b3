package io.indextables.spark.sync

import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.iceberg.data.BaseDeleteLoader
import org.apache.iceberg.spark.SparkSchemaUtil
import org.apache.iceberg.{DeleteFile, FileContent, FileScanTask, Snapshot, Table}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.StructType
import org.roaringbitmap.RoaringBitmap

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.lake.{IcebergTableRef, IcebergTables}
import io.indextables.spark.storage.LogStore

/**
 * An Apache Iceberg table, read through Iceberg's own API (iceberg-spark-runtime, the user's,
 * on the class path when their tables are Iceberg tables; see [[io.indextables.spark.lake.Libraries.icebergAvailable]]):
 * the live data files of its current snapshot, or of `snapshotId` (FROM SNAPSHOT), planned by a
 * table scan, each with the delete files that apply to it. Nothing of the table's metadata is
 * parsed here. Driver side.
 *
 * The table is taken as unpartitioned: Iceberg writes every column, partition sources among
 * them, into its data files, and its partitions are transforms of columns rather than
 * directories. Position deletes (and v3 deletion vectors) are honoured: [[deletedRows]] reads
 * them through Iceberg's delete loader. Refused, naming the feature: equality deletes, a column
 * renamed, retyped or dropped and added again in the table's history (its older files name or
 * type it otherwise), and a data file outside the table's location.
 *
 * The source version is the snapshot id: the index records the snapshot it reflects.
 */
final class IcebergTableSource(
    spark: SparkSession,
    ref: IcebergTableRef,
    snapshotId: Option[Long],
    conf: Configuration)
    extends CompanionSource {

  override val format: String = IcebergTables.Format

  private lazy val table: Table = IcebergTables.load(spark, ref, conf)

  override lazy val root: Path = LogStore.qualify(new Path(table.location()), conf)

  /** What the index records of how to find the table again. */
  override def configuration: Map[String, String] = IcebergTables.configuration(ref)

  override def configurationKeys: Set[String] =
    Set(IcebergTables.TableKey, IcebergTables.CatalogKey, IcebergTables.WarehouseKey)

  private lazy val snapshot: Option[Snapshot] = snapshotId match {
    case None => Option(table.currentSnapshot())
    case Some(id) => Some(Option(table.snapshot(id)).getOrElse(
        throw IndexTablesErrors.companionSourceVersionUnavailable(
          format,
          ref.describe,
          s"snapshot $id",
          new NoSuchElementException(s"the table has no snapshot $id (it holds " +
            table.snapshots().asScala.map(_.snapshotId()).mkString(", ") + ")")
        )))
  }

  /**
   * The data schema the table is read with, its history checked first: the table's current
   * schema (as Iceberg reads the current snapshot: a column added or dropped since it was made
   * counts), or the asked snapshot's own (as Iceberg reads a snapshot by time travel).
   */
  private lazy val dataSchema: StructType = {
    IcebergTableSource.checkHistory(table, ref)
    val schema = snapshotId.flatMap(_ => snapshot)
      .flatMap(s => Option(s.schemaId()).map(id => table.schemas().get(id)))
      .getOrElse(table.schema())
    ParquetFooters.asNullable(SparkSchemaUtil.convert(schema))
  }

  /** The delete files of each listed file that has some, by its relative path. */
  private val deletes = scala.collection.mutable.Map.empty[String, (String, Seq[DeleteFile])]

  private lazy val listing: SourceListing = {
    val schema = dataSchema
    val files = snapshot.toSeq.flatMap { s =>
      val tasks = table.newScan().useSnapshot(s.snapshotId()).planFiles()
      try tasks.iterator().asScala.map(sourceFile).toVector
      finally tasks.close()
    }
    SourceListing(
      files.sortBy(_.path),
      new StructType(),
      snapshot.map(_.snapshotId()),
      Some(schema))
  }

  override def list(): SourceListing = listing

  private def sourceFile(task: FileScanTask): SourceFile = {
    val file = task.file()
    val rel = relative(file.location())
    val fileDeletes = task.deletes().asScala.toSeq
    fileDeletes.find(_.content() == FileContent.EQUALITY_DELETES).foreach { d =>
      throw IndexTablesErrors.companionSourceFeatureUnsupported(
        format,
        ref.describe,
        s"equality deletes (${d.location()})",
        "they delete rows by value, which an index of the data files cannot leave out; " +
          "rewrite them into the data files first (CALL <catalog>.system.rewrite_data_files " +
          "with the option delete-file-threshold 1), then build again"
      )
    }
    if (fileDeletes.nonEmpty) deletes(rel) = (file.location(), fileDeletes)
    SourceFile(
      rel,
      file.fileSizeInBytes(),
      0L,
      Map.empty,
      Some(fileDeletes).filter(_.nonEmpty).map(ds => SourceDeletionVector(vectorId(ds))))
  }

  /**
   * One id for the delete files that apply to a file: they, and so the rows deleted, change
   * exactly when it does (a delete file is immutable; a v3 vector is a blob at an offset).
   */
  private def vectorId(files: Seq[DeleteFile]): String = {
    val digest = MessageDigest.getInstance("SHA-256")
    files.map(d => s"${d.location()}@${Option(d.contentOffset()).getOrElse("")}").sorted
      .foreach(s => digest.update((s + "\n").getBytes(StandardCharsets.UTF_8)))
    "iceberg:" + digest.digest().take(16).map("%02x".format(_)).mkString
  }

  override def dataSchemaOf(file: SourceFile): StructType = dataSchema

  override def deletedRows(file: SourceFile): RoaringBitmap = {
    val (location, files) = deletes.getOrElse(
      file.path,
      throw IndexTablesErrors.internalError(s"no delete files listed for ${file.path}"))
    val io = table.io()
    val index =
      try new BaseDeleteLoader((d: DeleteFile) => io.newInputFile(d))
          .loadPositionDeletes(files.asJava, location)
      catch {
        case NonFatal(e) => throw IndexTablesErrors.companionIndexFailed(location, e)
      }
    val out = new RoaringBitmap()
    index.forEach { row =>
      if (row > Int.MaxValue) throw IndexTablesErrors.companionIndexFailed(
        location,
        new ArithmeticException(s"its position deletes name row $row, past 2^31 - 1"))
      out.add(row.toInt)
    }
    out
  }

  /** A data file's path relative to the table's location. */
  private def relative(location: String): String =
    CompanionSource.relativeTo(root, LogStore.qualify(new Path(location), conf)).getOrElse(
      throw IndexTablesErrors.companionSourceFeatureUnsupported(
        format,
        ref.describe,
        s"a data file outside the table's location ${table.location()} ($location)",
        "a companion index reads its source's files below one directory; rewrite the " +
          "table's files into its location first (CALL <catalog>.system.rewrite_data_files)"
      ))
}

private object IcebergTableSource {

  /**
   * Refuses a table whose history renamed, retyped, or dropped and added again a column: its
   * older files hold that column under another name or type, which Iceberg maps by field id and
   * Spark's Parquet reader, which reads the index's rows, by name.
   */
  def checkHistory(table: Table, ref: IcebergTableRef): Unit = {
    val fields = table.schemas().values().asScala.toSeq.flatMap(_.columns().asScala)
    def refuse(what: String) = throw IndexTablesErrors.companionSourceFeatureUnsupported(
      IcebergTables.Format,
      ref.describe,
      what,
      "its older data files may hold the column otherwise than the table now names it, and " +
        "the index reads them by name; index a copy of the table (CREATE TABLE ... AS SELECT)"
    )
    fields.groupBy(_.fieldId()).values.foreach { versions =>
      val names = versions.map(_.name()).distinct
      if (names.size > 1) refuse(s"a renamed column (${names.mkString(" → ")})")
      val types = versions.map(_.`type`()).distinct
      if (types.size > 1) refuse(s"a column whose type changed (${names.head}: " +
        types.mkString(" → ") + ")")
    }
    fields.groupBy(_.name()).foreach { case (name, versions) =>
      if (versions.map(_.fieldId()).distinct.size > 1)
        refuse(s"a column dropped and added again under its old name ($name)")
    }
  }
}
