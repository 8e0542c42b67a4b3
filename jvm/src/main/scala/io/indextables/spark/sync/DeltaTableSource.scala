package io.indextables.spark.sync

import java.net.URI

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.{DeltaLog, NoMapping, Snapshot}
import org.apache.spark.sql.delta.actions.{AddFile, DeletionVectorDescriptor, RemoveFile}
import org.apache.spark.sql.delta.deletionvectors.StoredBitmap
import org.apache.spark.sql.delta.storage.dv.HadoopFileSystemDVStore
import org.apache.spark.sql.types.StructType
import org.roaringbitmap.RoaringBitmap

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.lake.{DeltaLogCalls, Libraries}
import io.indextables.spark.storage.LogStore

/**
 * A Delta Lake table, read through Delta's own snapshot API (delta-spark, the user's, on the
 * class path when their tables are Delta tables; see [[io.indextables.spark.lake.Libraries.deltaAvailable]]): its live
 * files at its latest version, or at `version`, their partition values typed by the table's
 * schema, and their deletion vectors. Nothing of the table's log is parsed here. Driver side.
 *
 * Refused, naming the feature: column mapping (the Parquet files' column names are not the
 * table's), and a file outside the table's directory (a shallow clone's). Deletion vectors are
 * honoured: [[deletedRows]] reads one through Delta.
 *
 * @param root     the table's qualified directory
 * @param version  the version to list (FROM VERSION), or None for the latest
 * @param timeZone the session's time zone, in which partition values are rendered
 */
final class DeltaTableSource(
    spark: SparkSession,
    val root: Path,
    version: Option[Long],
    timeZone: String)
    extends CompanionSource {

  override val format: String = DeltaTableSource.Format

  private lazy val log: DeltaLog = {
    val log = DeltaLog.forTable(spark, root)
    if (!log.tableExists) notATable()
    log
  }

  private def notATable(): Nothing = {
    val store = LogStore.forPath(root, spark.sessionState.newHadoopConf())
    if (!store.exists(root)) throw IndexTablesErrors.companionSourceNotFound(root.toString)
    throw IndexTablesErrors.companionSourceNotATable(
      format,
      root.toString,
      "it has no Delta log (_delta_log/ with a commit)")
  }

  private lazy val snapshot: Snapshot = version match {
    // Delta keeps a table's log open per path: a log gone since then updates to version -1.
    case None => Some(log.update()).filter(_.version >= 0).getOrElse(notATable())
    case Some(v) =>
      try DeltaLogCalls.snapshotAt(log, v)
      catch {
        case e: IndexTablesException => throw e
        case NonFatal(e) => throw IndexTablesErrors.companionSourceVersionUnavailable(
            format,
            root.toString,
            s"version $v",
            e)
      }
  }

  /** Delta's Hadoop configuration of the table, made once. */
  private lazy val deltaConf = log.newDeltaHadoopConf()

  /** Delta's vector descriptor of each listed file that has one, by its relative path. */
  private val vectors = scala.collection.mutable.Map.empty[String, DeletionVectorDescriptor]

  override def list(): SourceListing = listing

  /**
   * From the index's record of version `previous.version` and the table's commits after it, read
   * through Delta's `getChanges` ([[DeltaLogCalls]]; no state reconstruction): per version, its removes, then its
   * adds (a new deletion vector is a remove and an add of one path). Falls back to the full
   * listing when the index is newer, or when a commit after it cannot be read (its log was
   * cleaned up): every version must be there.
   */
  override def listSince(previous: Option[PreviousSync]): SourceListing = previous match {
    case Some(p) if p.version <= snapshot.version => changesSince(p).getOrElse(listing)
    case _ => listing
  }

  private def changesSince(p: PreviousSync): Option[SourceListing] = {
    val (partitionSchema, dataSchema) = schemas
    val changes =
      if (p.version == snapshot.version) Vector.empty
      else
        try DeltaLogCalls.changes(log, p.version + 1).takeWhile(_._1 <= snapshot.version).toVector
        catch {
          case e: IndexTablesException => throw e
          case NonFatal(_) => return None
        }
    if (changes.map(_._1) != (p.version + 1 to snapshot.version)) return None
    val files = scala.collection.mutable.Map(p.files.map(f => f.path -> f): _*)
    changes.foreach { case (_, actions) =>
      actions.foreach {
        case r: RemoveFile => files.remove(relative(r.path))
        case _ =>
      }
      actions.foreach {
        case a: AddFile =>
          val f = sourceFile(a, partitionSchema)
          files(f.path) = f
        case _ =>
      }
    }
    Some(SourceListing(
      files.values.toSeq.sortBy(_.path),
      partitionSchema,
      Some(snapshot.version),
      Some(dataSchema)))
  }

  /** The partition and data schemas of the snapshot, whose features are checked first. */
  private lazy val schemas: (StructType, StructType) = {
    val metadata = snapshot.metadata
    if (metadata.columnMappingMode != NoMapping) {
      throw IndexTablesErrors.companionSourceFeatureUnsupported(
        format,
        root.toString,
        s"column mapping (mode '${metadata.columnMappingMode.name}')",
        "its Parquet files name columns by physical names the index cannot map yet; index a " +
          "copy of the table without column mapping"
      )
    }
    (
      StructType(metadata.partitionSchema.fields.map(_.copy(nullable = true))),
      ParquetFooters.asNullable(StructType(
        metadata.schema.fields.filterNot(f => metadata.partitionColumns.contains(f.name)))))
  }

  private lazy val listing: SourceListing = {
    val (partitionSchema, dataSchema) = schemas
    val files = snapshot.allFiles.collect().toSeq.map(sourceFile(_, partitionSchema))
    SourceListing(files.sortBy(_.path), partitionSchema, Some(snapshot.version), Some(dataSchema))
  }

  /** The listing's entry of `add`, its vector's descriptor kept for [[deletedRows]]. */
  private def sourceFile(add: AddFile, partitionSchema: StructType): SourceFile = {
    val rel = relative(add.path)
    Option(add.deletionVector).foreach(d => vectors(rel) = d)
    SourceFile(
      rel,
      add.size,
      add.modificationTime,
      partitionSchema.fields.map { f =>
        val raw = add.partitionValues.getOrElse(f.name, null)
        f.name -> PartitionInference.canonical(raw, f.dataType, timeZone).getOrElse(
          throw IndexTablesErrors.companionPartitionLayout(
            root.toString,
            rel,
            s"its value '$raw' of partition column '${f.name}' is not a ${f.dataType.sql}"))
      }.toMap,
      Option(add.deletionVector).map(d => SourceDeletionVector(d.uniqueId))
    )
  }

  override def dataSchemaOf(file: SourceFile): StructType = listing.dataSchema.get

  override def deletedRows(file: SourceFile): RoaringBitmap = {
    // A file the index knew before has no descriptor here until the full listing is read.
    val descriptor = vectors.get(file.path).orElse { listing; vectors.get(file.path) }.getOrElse(
      throw IndexTablesErrors.internalError(s"no deletion vector listed for ${file.path}"))
    val rows =
      try StoredBitmap.create(descriptor, log.dataPath)
          .load(new HadoopFileSystemDVStore(deltaConf))
      catch {
        case NonFatal(e) => throw IndexTablesErrors.companionIndexFailed(
            new Path(root, file.path).toString,
            e)
      }
    val out = new RoaringBitmap()
    rows.forEach { row =>
      if (row > Int.MaxValue) throw IndexTablesErrors.companionIndexFailed(
        new Path(root, file.path).toString,
        new ArithmeticException(s"its deletion vector names row $row, past 2^31 - 1"))
      out.add(row.toInt)
    }
    out
  }

  /** A file's path relative to the table's directory, decoded (Delta's paths are URIs). */
  private def relative(path: String): String = {
    val uri = new URI(path)
    if (!uri.isAbsolute && !uri.getPath.startsWith("/")) uri.getPath
    else {
      val full = LogStore.qualify(new Path(uri), deltaConf)
      CompanionSource.relativeTo(root, full).getOrElse(throw IndexTablesErrors
        .companionSourceFeatureUnsupported(
          format,
          root.toString,
          s"a data file outside the table's directory ($full)",
          "a companion index reads its source's files below one directory; index a deep " +
            "clone of the table instead"
        ))
    }
  }
}

object DeltaTableSource {

  val Format: String = Libraries.DeltaFormat
}
