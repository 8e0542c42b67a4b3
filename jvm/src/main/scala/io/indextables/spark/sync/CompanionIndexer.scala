package io.indextables.spark.sync

import java.io.{File, IOException}
import java.nio.file.{Files, StandardCopyOption}
import java.time.LocalDate
import java.util.UUID

import scala.annotation.nowarn
import scala.jdk.CollectionConverters._
import scala.util.Try
import scala.util.control.NonFatal

import org.apache.commons.io.FileUtils
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.schema.{IndexKind, IndexedField, PartitionValues}
import io.indextables.spark.stats.StatsValues
import io.indextables.spark.storage.{LocalSplitCache, LogStore}
import io.indextables.spark.transaction.{AddAction, TableLayout, TablePaths}
import io.indextables.spark.util.{NativeLibrary, SerializableHadoopConf}
import io.indextables.spark.write.CompanionWrite
import io.indextables.tantivy4java.split.ColumnStatistics
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * What the executors need to index groups of a source's files. Serializable; built on the driver.
 *
 * @param dataSchema the data columns every file must hold (the index's recorded schema)
 * @param fields     the indexed columns, as tantivy4java indexes them
 * @param excluded   data columns left out of the index
 * @param parquetPathsFromDirectory whether the split's manifest names its files relative to
 *                   their directory (see [[TableLayout.ParquetPathsKey]]), not the source root
 * @param mayLackColumns whether a file may lack some of `dataSchema`'s columns: those its
 *                   source table gained after writing it (see [[SourceSchema]])
 */
final case class IndexTaskSpec(
    indexPath: String,
    sourceRoot: String,
    hadoopConf: SerializableHadoopConf,
    dataSchema: StructType,
    partitionColumns: Seq[String],
    fields: Seq[IndexedField],
    excluded: Seq[String],
    fastFieldMode: String,
    heapSize: Long,
    statsTruncateAt: Int,
    parquetPathsFromDirectory: Boolean = false,
    mayLackColumns: Boolean = false)

/** The end of one group on an executor. */
sealed trait IndexOutcome {
  def group: IndexGroup
}

object IndexOutcome {

  /** The group's split, already in the index location (not yet in its log). */
  final case class Indexed(group: IndexGroup, add: AddAction) extends IndexOutcome

  /** Indexing failed; nothing of it is left in the index location. */
  final case class Failed(group: IndexGroup, error: IndexTablesException) extends IndexOutcome
}

/**
 * Indexes one group of Parquet files into index-only splits with tantivy4java's
 * `createFromParquet`, on an executor, copying no row into the index: files on the local disk
 * are read where they are; files on object stores (S3, Azure) and HDFS are copied through their
 * [[LogStore]] to a local directory laid out as the source. Each file's footer is checked first:
 * its columns must be the index's (a table's older files may lack the columns it gained since),
 * and the split must hold every row. The files of one set of columns make one split: a group
 * whose files differ (a table that gained a column) makes one split for each. Each split is
 * published under its partition directory in the index location through the index's
 * [[LogStore]]; its add action names the files relative to the source root. Any failure deletes
 * what was published of that split and returns [[IndexOutcome.Failed]] for it.
 */
object CompanionIndexer {

  NativeLibrary.ensureLoaded()

  def index(spec: IndexTaskSpec, group: IndexGroup): Seq[IndexOutcome] = {
    val conf = spec.hadoopConf.value
    val root = new Path(spec.sourceRoot)
    val sourceStore = LogStore.forPath(root, conf)
    val footers =
      try group.files.map(f => f -> checkedFooter(spec, sourceStore, root, f))
      catch {
        case NonFatal(e) => return Seq(failed(group, e))
      }
    val shapes = footers.groupBy(_._2.schema.fieldNames.toSeq).values.toSeq
      .sortBy(s => group.files.indexOf(s.head._1))
    shapes.map { shape =>
      val files = group.files.filter(f => shape.exists(_._1 == f))
      val columns = shape.head._2.schema.fieldNames.toSet
      indexShape(
        spec,
        sourceStore,
        root,
        if (shapes.size == 1) group else group.copy(files = files),
        shape.map(_._2.rows).sum,
        columns)
    }
  }

  /** The split of `group`'s files, all of the data columns `columns`, holding `rows` rows. */
  private def indexShape(
      spec: IndexTaskSpec,
      sourceStore: LogStore,
      root: Path,
      group: IndexGroup,
      rows: Long,
      columns: Set[String]): IndexOutcome = {
    val conf = spec.hadoopConf.value
    val indexRoot = new Path(spec.indexPath)
    val indexStore = LogStore.forPath(indexRoot, conf)
    val work = Files.createTempDirectory("indextables-companion-").toFile
    var published: Option[Path] = None
    // The fields of the columns these files hold (and the partition columns).
    val fields =
      spec.fields.filter(f => columns.contains(f.name) || spec.partitionColumns.contains(f.name))
    try {
      val (nativeRoot, inputs) = nativeInputs(spec, sourceStore, root, group, work)
      val config = CompanionWrite.config(nativeRoot, fields, spec.fastFieldMode, spec.heapSize)
      // A partition column a file holds too (see checkedFooter) is not indexed from the file:
      // its values are the listing's, as in every other split of the index.
      val skipped = fields.filterNot(_.indexed).map(_.name) ++ spec.excluded.filter(columns) ++
        spec.partitionColumns.filter(columns)
      if (skipped.nonEmpty) config.withSkipFields(skipped: _*)
      val statsFields = fields.filter(hasStats)
      if (statsFields.nonEmpty) config.withStatisticsFields(statsFields.map(_.name): _*)
      val out = new File(work, s"part-${UUID.randomUUID()}.split")
      val md =
        try QuickwitSplit.createFromParquet(inputs.asJava, out.getAbsolutePath, config)
        catch {
          case NonFatal(e) => throw IndexTablesErrors.companionIndexFailed(describe(group), e)
        }
      if (md.getNumDocs != rows) throw IndexTablesErrors.companionIndexFailed(
        describe(group),
        new IllegalStateException(s"the split holds ${md.getNumDocs} rows of $rows"))
      val (merged, inRowOrder) = CompanionWrite.toOneSegment(
        out,
        rows,
        group.files.size,
        work,
        spec.heapSize,
        describe(group))
      val packed = merged.getOrElse(md)
      val dir = PartitionValues.directory(spec.partitionColumns, group.partitionValues)
      val name = s"part-${UUID.randomUUID()}.split"
      val relative = if (dir.isEmpty) name else s"$dir/$name"
      val size = out.length()
      val dest = new Path(indexRoot, relative)
      published = Some(dest)
      indexStore.upload(out, dest)
      IndexOutcome.Indexed(
        group,
        addAction(spec, group, relative, size, md, packed, inRowOrder, statsFields))
    } catch {
      case NonFatal(e) =>
        published.foreach(p => Try(indexStore.delete(p)))
        failed(group, e)
    } finally FileUtils.deleteQuietly(work)
  }

  private def failed(group: IndexGroup, e: Throwable): IndexOutcome = IndexOutcome.Failed(
    group,
    e match {
      case i: IndexTablesException => i
      case other => IndexTablesErrors.companionIndexFailed(describe(group), other)
    })

  private def describe(group: IndexGroup): String = group.files.map(_.path) match {
    case Seq(one) => one
    case many => s"${many.head} (and ${many.size - 1} more)"
  }

  /** The footer of `file`, whose columns must fit the index's. */
  private def checkedFooter(
      spec: IndexTaskSpec,
      store: LogStore,
      root: Path,
      file: SourceFile): ParquetFooters.Footer = {
    val path = TablePaths.resolve(root, file.path)
    val footer =
      try ParquetFooters.read(store, path, file.size)
      catch {
        case e: IOException => throw IndexTablesErrors.companionIndexFailed(path.toString, e)
      }
    // A partition column may be in the file too (Delta 4.4 on Spark 4.2 writes it there): its
    // value is the partition's, which the index takes from the listing, as Delta reads it.
    val data =
      StructType(footer.schema.fields.filterNot(f => spec.partitionColumns.contains(f.name)))
    SourceSchema.misfit(data, spec.dataSchema, spec.mayLackColumns).foreach { why =>
      throw IndexTablesErrors.companionSchemaChanged(spec.indexPath, s"the Parquet file $path", why)
    }
    footer
  }

  /**
   * The root and files as tantivy4java reads them: local paths, or local copies laid out as the
   * source under `work`. Files on object stores are copied through the index's [[LogStore]]
   * (every byte is read to index it anyway): tantivy4java 0.31.0's own S3 reader of
   * `createFromParquet` fails to open a file on an S3-compatible endpoint (moto) that its split
   * reader and our store read.
   */
  private def nativeInputs(
      spec: IndexTaskSpec,
      store: LogStore,
      root: Path,
      group: IndexGroup,
      work: File): (String, Seq[String]) = {
    val paths = group.files.map(f => f -> TablePaths.resolve(root, f.path))
    // The directory the manifest names the files under: theirs, or the source root.
    val dir =
      if (!spec.parquetPathsFromDirectory) ""
      else TableLayout.directoryOf(group.files.map(_.path)).getOrElse(
        throw IndexTablesErrors.companionIndexFailed(
          describe(group),
          new IllegalArgumentException("the group's files lie in more than one directory")))
    val nativeRoot = if (dir.isEmpty) root else TablePaths.resolve(root, dir)
    if (LogStore.isLocal(root)) {
      def local(p: Path) = new File(p.toUri.getPath).getPath
      (local(nativeRoot), paths.map(p => local(p._2)))
    } else {
      val mirror = new File(work, "source")
      val cache = LocalSplitCache.Settings(spec.hadoopConf.value)
      val copies = paths.map { case (f, p) =>
        val copy = store.localCopy(p, s"$p|${f.size}|${f.modificationTime}", cache)
        val target = new File(mirror, f.path)
        target.getParentFile.mkdirs()
        Files.copy(copy.toPath, target.toPath, StandardCopyOption.REPLACE_EXISTING)
        target.getPath
      }
      (new File(mirror, dir).getPath, copies)
    }
  }

  /** Whether tantivy4java computes min/max statistics of `f` that the log can hold. */
  private def hasStats(f: IndexedField): Boolean = f.indexed && (f.dataType match {
    case StringType => f.kind == IndexKind.RawString || f.kind == IndexKind.Text
    case ByteType | ShortType | IntegerType | LongType | DoubleType | FloatType | DateType |
        TimestampType =>
      true
    case _ => false
  })

  /**
   * The add action of the group's split: statistics, doc mapping and sizes from `md` (what
   * `createFromParquet` reported), footer offsets from `packed` (the split as published, after
   * [[CompanionWrite.toOneSegment]]).
   */
  // getDocMappingJson is deprecated in 0.31.0 but is the only source of the split's mapping.
  @nowarn("cat=deprecation")
  private def addAction(
      spec: IndexTaskSpec,
      group: IndexGroup,
      relative: String,
      size: Long,
      md: QuickwitSplit.SplitMetadata,
      packed: QuickwitSplit.SplitMetadata,
      inRowOrder: Boolean,
      statsFields: Seq[IndexedField]): AddAction = {
    val stats = Option(md.getColumnStatistics).map(_.asScala.toMap).getOrElse(Map.empty)
    val bounds = statsFields.flatMap { f =>
      stats.get(f.name).flatMap(s => minMax(f.dataType, s, spec.statsTruncateAt)).map(f.name -> _)
    }
    AddAction(
      path = relative,
      partitionValues = group.partitionValues,
      size = size,
      modificationTime = System.currentTimeMillis(),
      dataChange = true,
      minValues = if (bounds.isEmpty) None else Some(bounds.map(b => b._1 -> b._2._1).toMap),
      maxValues = if (bounds.isEmpty) None else Some(bounds.map(b => b._1 -> b._2._2).toMap),
      numRecords = Some(md.getNumDocs),
      hasFooterOffsets = true,
      footerStartOffset = Some(packed.getFooterStartOffset),
      footerEndOffset = Some(packed.getFooterEndOffset),
      numMergeOps = Some(0),
      docMappingJson = Option(md.getDocMappingJson),
      uncompressedSizeBytes = Some(md.getUncompressedSizeBytes),
      companionSourceFiles = Some(group.files.map(_.path)),
      companionFastFieldMode = Some(spec.fastFieldMode),
      companionSourceFileSizes = Some(group.files.map(_.size)),
      companionDocsInRowOrder = Some(inRowOrder)
    )
  }

  /**
   * A column's (min, max) as the log records them (see [[io.indextables.spark.stats.SplitStatistics]]),
   * None when the split holds no non-null value of it.
   */
  private def minMax(dt: DataType, s: ColumnStatistics, truncateAt: Int)
      : Option[(String, String)] = {
    def both[T](min: T, max: T)(show: T => String) =
      for (lo <- Option(min); hi <- Option(max)) yield (show(lo), show(hi))
    def plain(d: String) = new java.math.BigDecimal(d).toPlainString
    def finite(d: java.lang.Double) = if (d == null || d.isNaN || d.isInfinite) null else d
    dt match {
      case StringType => both(s.getMinString, s.getMaxString)(_.take(truncateAt))
      case ByteType | ShortType | IntegerType | LongType =>
        both(s.getMinLong, s.getMaxLong)(_.toString)
      case DoubleType =>
        both(finite(s.getMinDouble), finite(s.getMaxDouble))(d => plain(d.toString))
      case FloatType =>
        both(finite(s.getMinDouble), finite(s.getMaxDouble))(d => plain(d.floatValue.toString))
      case TimestampType =>
        both(s.getMinTimestampMicros, s.getMaxTimestampMicros)(m =>
          StatsValues.formatTimestamp(m.longValue))
      case DateType =>
        both(s.getMinTimestampMicros, s.getMaxTimestampMicros)(m =>
          LocalDate.ofEpochDay(Math.floorDiv(m.longValue, 86400000000L)).toString)
      case _ => None
    }
  }
}
