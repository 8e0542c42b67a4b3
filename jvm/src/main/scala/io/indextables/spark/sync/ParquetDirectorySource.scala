package io.indextables.spark.sync

import java.io.IOException

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils
import org.apache.spark.sql.types.{StructField, StructType}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.storage.{FileInfo, LogStore}
import io.indextables.spark.transaction.TablePaths

/**
 * A directory of Parquet files, Hive-partitioned (`day=2024-01-01/part-0.parquet`) or not, as
 * Spark writes them: listed through the directory's [[LogStore]], skipping what Spark skips
 * (names starting with `_` or `.`, except partition directories, and `._COPYING_` files).
 * Every file must sit under the same partition columns, in the same order; their types are
 * inferred from the directory values as `spark.read.parquet` infers them. Driver side.
 *
 * @param root          the qualified directory
 * @param typeInference Spark's `spark.sql.sources.partitionColumnTypeInference.enabled`
 */
final class ParquetDirectorySource(
    val root: Path,
    hadoopConf: Configuration,
    timeZone: String,
    typeInference: Boolean)
    extends CompanionSource {

  override val format: String = "parquet"

  private val store = LogStore.forPath(root, hadoopConf)

  override def list(): SourceListing = {
    val prefix = root.toUri.getPath.stripSuffix("/") + "/"
    val all = store.listRecursively(root).toVector
    val files = all.flatMap { info =>
      val full = info.path.toUri.getPath
      if (!full.startsWith(prefix)) None
      else Some(full.substring(prefix.length) -> info).filterNot(f =>
        ParquetDirectorySource.hidden(f._1))
    }.sortBy(_._1)
    if (files.isEmpty) {
      if (all.isEmpty && !store.exists(root))
        throw IndexTablesErrors.companionSourceNotFound(root.toString)
      throw IndexTablesErrors.companionSourceEmpty(root.toString)
    }
    val parsed = files.map { case (rel, info) => (rel, info, directories(rel)) }
    val columns = parsed.head._3.map(_._1)
    parsed.foreach { case (rel, _, dirs) =>
      if (dirs.map(_._1) != columns) throw IndexTablesErrors.companionPartitionLayout(
        root.toString,
        rel,
        s"its directories name the partition columns [${dirs.map(_._1).mkString(", ")}], " +
          s"the first file's (${parsed.head._1}) [${columns.mkString(", ")}]"
      )
    }
    val types = columns.indices.map { i =>
      PartitionInference.columnType(parsed.map(_._3(i)._2), typeInference, timeZone)
    }
    SourceListing(
      parsed.map { case (rel, info, dirs) => file(rel, info, dirs.map(_._2), columns, types) },
      StructType(columns.zip(types).map { case (c, t) => StructField(c, t) }))
  }

  override def dataSchemaOf(file: SourceFile): StructType = {
    val path = TablePaths.resolve(root, file.path)
    try ParquetFooters.read(store, path, file.size).schema
    catch {
      case e: IOException => throw IndexTablesErrors.companionIndexFailed(path.toString, e)
    }
  }

  private def file(
      rel: String,
      info: FileInfo,
      raws: Seq[String],
      columns: Seq[String],
      types: Seq[org.apache.spark.sql.types.DataType]): SourceFile = {
    val values = columns.indices.map { i =>
      columns(i) -> PartitionInference.canonical(raws(i), types(i), timeZone).orNull
    }
    SourceFile(rel, info.length, info.modificationTime, values.toMap)
  }

  /** The (column, raw value: null for NULL) of each directory of `rel`, outermost first. */
  private def directories(rel: String): Seq[(String, String)] =
    rel.split('/').dropRight(1).toSeq.map { dir =>
      val eq = dir.indexOf('=')
      if (eq <= 0) throw IndexTablesErrors.companionPartitionLayout(
        root.toString,
        rel,
        s"its directory '$dir' is not a partition directory (column=value)")
      val column = ExternalCatalogUtils.unescapePathName(dir.substring(0, eq))
      val raw = dir.substring(eq + 1)
      column ->
        (if (raw == PartitionValues.DefaultPartitionName) null
         else ExternalCatalogUtils.unescapePathName(raw))
    }
}

object ParquetDirectorySource {

  /** Whether Spark's file sources skip `rel` (a path below the root): any part of it hidden. */
  def hidden(rel: String): Boolean = rel.split('/').exists { name =>
    (name.startsWith("_") && !name.contains("=")) || name.startsWith(".") ||
    name.endsWith("._COPYING_")
  }
}
