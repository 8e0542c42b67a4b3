package io.indextables.spark.read

import org.apache.hadoop.fs.Path
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.parquet.hadoop.ParquetInputFormat
import org.apache.spark.sql.execution.datasources.parquet.{ParquetOptions, ParquetReadSupport, ParquetUtils, ParquetWriteSupport}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetPartitionReaderFactory
import org.apache.spark.sql.sources.{Filter, IsNotNull}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.apache.spark.util.SerializableConfiguration
import org.roaringbitmap.RoaringBitmap

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.metrics.ScanMetrics
import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.storage.{LocalSplitCache, LogStore, SplitFileGate}
import io.indextables.spark.transaction.{DeletionVectorDescriptor, TableLayout, TablePaths}

/**
 * One Parquet file of a companion table to read, with its split's partition values, and the
 * split's deletion vector when it has one (its docs then in row order: see
 * [[ParquetDeletedRows]]).
 */
final case class CompanionParquetFile(
    path: String,
    split: String,
    partitionValues: Map[String, String],
    numRecords: Option[Long],
    size: Option[Long] = None,
    deletionVector: Option[DeletionVectorDescriptor] = None)

/** The Parquet files one read task reads, one after the other. */
final case class CompanionParquetGroup(files: Seq[CompanionParquetFile], locations: Seq[String])
    extends InputPartition {
  override def preferredLocations(): Array[String] = locations.toArray
}

/**
 * The Parquet route of a companion table: a scan that leaves the index alone, because nothing
 * in it is for the index to do (no search, no pushed aggregation), and reads the Parquet files
 * of the candidate splits with Spark's own vectorized Parquet reader, in columnar batches.
 * Partition pruning and min/max skipping chose the splits; Spark's reader skips row groups by
 * the data filters (which Spark checks again on every row) and reads only the required columns.
 *
 * @param parquetRoot    the directory the files' paths are relative to (the table's own, or
 *                       an external source's)
 * @param dataSchema     the columns the Parquet files hold (the table's less its partitions)
 * @param readDataSchema the columns of `dataSchema` the query needs
 * @param readPartitionSchema the partition columns the query needs, after them
 * @param reason         why the scan took this route, for EXPLAIN
 * @param nonNull        columns whose NULL rows the scan drops (IS NOT NULL filters pushed)
 * @param sourceNote     the external source and its version, for EXPLAIN (", source ...")
 * @param pruning        the splits planning pruned, as the scan's driver metrics
 */
final class CompanionParquetScan(
    tablePath: String,
    parquetRoot: String,
    version: Long,
    groups: Seq[CompanionParquetGroup],
    totalSplits: Int,
    dataSchema: StructType,
    readDataSchema: StructType,
    readPartitionSchema: StructType,
    dataFilters: Seq[Filter],
    pushedFilters: Seq[Filter],
    hadoopConf: SerializableConfiguration,
    timeZone: String,
    reason: String,
    nonNull: Seq[String] = Nil,
    sourceNote: String = "",
    pruning: Array[CustomTaskMetric] = Array.empty,
    protected val streamOf: Option[ScanInputs] = None) extends StreamableScan with Batch {

  override def supportedCustomMetrics(): Array[CustomMetric] = ScanMetrics.all

  /** What planning pruned; no split is searched on this route (`metrics/ScanMetrics`). */
  override def reportDriverMetrics(): Array[CustomTaskMetric] = pruning

  override def readSchema(): StructType = StructType(readDataSchema ++ readPartitionSchema)

  override def toBatch: Batch = this

  override def planInputPartitions(): Array[InputPartition] = groups.toArray[InputPartition]

  override def createReaderFactory(): PartitionReaderFactory = {
    val spark = SparkSession.active
    val sqlConf = spark.sessionState.conf
    // What Spark's own ParquetScan tells its readers through the Hadoop configuration.
    val conf = new org.apache.hadoop.conf.Configuration(hadoopConf.value)
    val requested = readDataSchema.json
    conf.set(ParquetInputFormat.READ_SUPPORT_CLASS, classOf[ParquetReadSupport].getName)
    conf.set(ParquetReadSupport.SPARK_ROW_REQUESTED_SCHEMA, requested)
    conf.set(ParquetWriteSupport.SPARK_ROW_SCHEMA, requested)
    conf.set(SQLConf.SESSION_LOCAL_TIMEZONE.key, sqlConf.sessionLocalTimeZone)
    conf.setBoolean(SQLConf.NESTED_SCHEMA_PRUNING_ENABLED.key, sqlConf.nestedSchemaPruningEnabled)
    conf.setBoolean(SQLConf.CASE_SENSITIVE.key, sqlConf.caseSensitiveAnalysis)
    ParquetWriteSupport.setSchema(readDataSchema, conf)
    conf.setBoolean(SQLConf.PARQUET_BINARY_AS_STRING.key, sqlConf.isParquetBinaryAsString)
    conf.setBoolean(SQLConf.PARQUET_INT96_AS_TIMESTAMP.key, sqlConf.isParquetINT96AsTimestamp)
    conf.setBoolean(
      SQLConf.PARQUET_INFER_TIMESTAMP_NTZ_ENABLED.key,
      sqlConf.parquetInferTimestampNTZEnabled)
    conf.setBoolean(SQLConf.LEGACY_PARQUET_NANOS_AS_LONG.key, sqlConf.legacyParquetNanosAsLong)
    val broadcast = spark.sparkContext.broadcast(new SerializableConfiguration(conf))
    def parquet(filters: Seq[Filter]) = ParquetPartitionReaderFactory(
      sqlConf,
      broadcast,
      dataSchema,
      readDataSchema,
      readPartitionSchema,
      filters.toArray,
      None,
      new ParquetOptions(Map.empty[String, String], sqlConf))
    new CompanionParquetReaderFactory(
      tablePath,
      parquetRoot,
      parquet(dataFilters),
      // A file with deleted rows is read whole, so that its rows' positions are known.
      parquet(Nil),
      broadcast,
      readPartitionSchema,
      timeZone,
      nonNull.isEmpty && ParquetUtils.isBatchReadSupportedForSchema(sqlConf, readSchema()),
      nonNull.map(c => readSchema().fieldIndex(c))
    )
  }

  override def description(): String =
    s"IndexTablesScan $tablePath (version $version$sourceNote) Route: parquet ($reason), " +
      s"PushedFilters: [${pushedFilters.mkString(", ")}], " +
      s"ParquetFilters: [${dataFilters.mkString(", ")}], " +
      (if (nonNull.isEmpty) "" else s"NonNull: [${nonNull.mkString(", ")}], ") +
      s"Splits: ${groups.flatMap(_.files.map(_.split)).distinct.size}/$totalSplits, " +
      s"Tasks: ${groups.size}, Files: ${groups.map(_.files.size).sum}"
}

private[read] object CompanionParquetScan {

  /**
   * The Parquet route's scan of the kept splits of `in` (every one of which has Parquet files):
   * their files grouped into tasks as splits are, with the IS NOT NULL filters pushed (the only
   * data filters the route takes) applied by the reader.
   */
  def plan(in: ScanInputs, reason: String): CompanionParquetScan = {
    val spark = SparkSession.active
    val table = in.table
    val opts = table.opts
    // What one task reads together: a file, or every file of a split with deleted rows, in
    // order, whose row positions run on from one file to the next.
    val units = in.kept.flatMap { a =>
      val files = a.companionSourceFiles.getOrElse(Nil).map { f =>
        // A path outside the Parquet root fails here, on the driver, before any task starts.
        TablePaths.resolve(TableLayout.parquetRoot(table.snapshot), f)
        CompanionParquetFile(
          f,
          a.path,
          a.partitionValues,
          a.numRecords,
          a.companionSizes.get(f),
          a.deletionVector)
      }
      if (a.deletionVector.isDefined) Seq(files) else files.map(Seq(_))
    }
    val partitionNames = table.partitionColumns.toSet
    val required = in.required
    val readData = StructType(required.fields.filterNot(f => partitionNames.contains(f.name)))
    val readPartitions =
      StructType(table.partitionColumns.flatMap(c => required.find(_.name == c)))
    val dataSchema =
      StructType(table.schema.fields.filterNot(f => partitionNames.contains(f.name)))
    val groups = SplitGroups.of(
      units.zipWithIndex.map { case (u, i) =>
        SplitInputPartition(
          i.toString,
          u.head.partitionValues,
          u.head.numRecords,
          None,
          0L,
          0L,
          None,
          hasLongTokens = false)
      },
      opts.get(IndexTablesConf.SplitsPerTask),
      opts.get(IndexTablesConf.MaxSplitsPerTask),
      spark.sparkContext.defaultParallelism
    ).map(g => CompanionParquetGroup(g.splits.flatMap(s => units(s.path.toInt)), Nil))
    val nonNull = in.filters.pushed.collect {
      case IsNotNull(c) if !partitionNames.contains(c) => c
    }
    new CompanionParquetScan(
      table.tablePath,
      TableLayout.parquetRoot(table.snapshot).toString,
      table.snapshot.version,
      groups,
      in.files.size,
      dataSchema,
      readData,
      readPartitions,
      in.filters.data,
      in.filters.pushed,
      new SerializableConfiguration(
        spark.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)),
      table.timeZone,
      reason,
      nonNull.distinct,
      in.sourceNote,
      in.pruning,
      Some(in)
    )
  }
}

/**
 * Reads the Parquet files of a [[CompanionParquetGroup]] through Spark's Parquet reader, each
 * file found first through the table's [[LogStore]] (its length, and a clear error naming it and
 * its split when it is missing), and read from a local copy when it lives on an object store.
 */
final class CompanionParquetReaderFactory(
    tablePath: String,
    parquetRoot: String,
    parquet: ParquetPartitionReaderFactory,
    unfiltered: ParquetPartitionReaderFactory,
    conf: Broadcast[SerializableConfiguration],
    readPartitionSchema: StructType,
    timeZone: String,
    columnar: Boolean,
    nonNullOrdinals: Seq[Int]) extends PartitionReaderFactory {

  override def supportColumnarReads(partition: InputPartition): Boolean = columnar

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = {
    val rows = new Chained[InternalRow](
      partition,
      parquet.buildReader,
      unfiltered.buildReader,
      new ParquetDeletedRows.Rows(_, _, _))
    if (nonNullOrdinals.isEmpty) rows
    else new PartitionReader[InternalRow] {
      override def next(): Boolean = {
        while (rows.next()) {
          val r = rows.get()
          if (!nonNullOrdinals.exists(r.isNullAt)) return true
        }
        false
      }
      override def get(): InternalRow = rows.get()
      override def close(): Unit = rows.close()
    }
  }

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] =
    new Chained[ColumnarBatch](
      partition,
      parquet.buildColumnarReader,
      unfiltered.buildColumnarReader,
      new ParquetDeletedRows.Batches(_, _, _))

  /**
   * The files of a group read one after the other, each through its own reader; a file of a
   * split with deleted rows read whole, less them. The files of such a split come together and
   * in order (see [[CompanionParquetScan.plan]]): a file's first doc is the rows of the files
   * before it.
   */
  private final class Chained[T](
      partition: InputPartition,
      open: PartitionedFile => PartitionReader[T],
      openWhole: PartitionedFile => PartitionReader[T],
      lessDeleted: (
          PartitionReader[T],
          RoaringBitmap,
          Long) => PartitionReader[T] with ParquetDeletedRows.Counted)
      extends PartitionReader[T] {
    private val pending = partition.asInstanceOf[CompanionParquetGroup].files.iterator
    private var current: PartitionReader[T] = _
    // The local copies it reads stay until close: FLUSH DISK CACHE waits for it.
    private val use = SplitFileGate.enter()
    // The split of the last file with deleted rows, and the doc its next file starts at.
    private var split: String = _
    private var nextDoc = 0L

    override def next(): Boolean = {
      while (current == null || !current.next()) {
        if (current != null) { current.close(); current = null }
        if (!pending.hasNext) return false
        current = openFile(pending.next())
      }
      true
    }

    private def openFile(file: CompanionParquetFile): PartitionReader[T] =
      file.deletionVector match {
        case None => open(locate(file))
        case Some(d) =>
          val deleted = DeletionVectors.load(tablePath, conf.value.value, file.split, d)
          if (file.split != split) { split = file.split; nextDoc = 0L }
          val first = nextDoc
          val reader = lessDeleted(openWhole(locate(file)), deleted, first)
          new PartitionReader[T] {
            override def next(): Boolean = reader.next()
            override def get(): T = reader.get()
            override def close(): Unit = { nextDoc = first + reader.read; reader.close() }
          }
      }

    override def get(): T = current.get()

    override def close(): Unit =
      try if (current != null) { current.close(); current = null }
      finally use.end()
  }

  private def locate(file: CompanionParquetFile): PartitionedFile = {
    val hadoop = conf.value.value
    val root = LogStore.qualify(new Path(parquetRoot), hadoop)
    val path = TablePaths.resolve(root, file.path)
    try {
      val store = LogStore.forPath(path, hadoop)
      val status = store.status(path)
      file.size.filter(_ != status.length).foreach { recorded =>
        throw IndexTablesErrors.companionFileChanged(
          path.toString,
          file.split,
          recorded,
          status.length)
      }
      val local =
        if (LogStore.isObjectStore(path)) {
          val identity = s"${path}|${status.length}|${status.modificationTime}"
          val settings = LocalSplitCache.Settings(hadoop)
          // The S3 store serves splits to tantivy4java by URL and makes no local copies.
          val copy =
            if (LogStore.isS3(path))
              LocalSplitCache.get(identity, settings) { target =>
                java.nio.file.Files.write(target.toPath, store.read(path))
              }
            else store.localCopy(path, identity, settings)
          new Path(copy.toURI)
        } else path
      val values = new GenericInternalRow(readPartitionSchema.fields.map { f =>
        PartitionValues.decode(file.partitionValues.getOrElse(f.name, null), f.dataType, timeZone)
      })
      PartitionedFile(
        values,
        SparkPath.fromPath(local),
        0L,
        status.length,
        Array.empty[String],
        status.modificationTime,
        status.length)
    } catch {
      case e: IndexTablesException => throw e
      case e: Exception =>
        throw IndexTablesErrors.companionFileUnreadable(path.toString, file.split, e)
    }
  }
}
