package io.indextables.spark.write

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.distributions.{Distribution, Distributions}
import org.apache.spark.sql.connector.expressions.{Expression, Expressions, SortDirection, SortOrder}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.connector.write.{BatchWrite, LogicalWriteInfo, RequiresDistributionAndOrdering, SupportsDynamicOverwrite, SupportsOverwrite, Write, WriteBuilder}
import org.apache.spark.sql.sources.{AlwaysTrue, Filter}
import org.apache.spark.sql.types.StructType

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.purge.PurgeOnWrite
import io.indextables.spark.schema.{IndexedField, IndexingRequest, SchemaEvolution, TableIndexing, TableIndexSchema}
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction.{AddAction, Snapshot, StreamingTxn, TableLayout, TablePaths, TransactionLog}
import io.indextables.spark.merge.MergeOnWriteSettings
import io.indextables.spark.util.SerializableHadoopConf

/**
 * Plans a write on the driver: decides which rows it replaces ([[WriteMode]]: append, the whole
 * table, the rows of a replaceWhere predicate, or the partitions written), and checks the data
 * against the table (types, schema, partitioning, index types) before any task starts, so bad
 * input fails with nothing written.
 *
 * @param tableName        the table's name, for messages
 * @param existing         the table's latest snapshot, None for a new table
 * @param resolveOptions   the write's options resolved over the session and the table
 * @param tableProperties  the properties a CREATE or REPLACE TABLE gives the table, recorded in
 *                         its metadata when this write creates or replaces it
 */
final class IndexTables4SparkWriteBuilder(
    tableName: String,
    tablePath: String,
    requestedPartitionColumns: Seq[String],
    existing: Option[Snapshot],
    resolveOptions: Map[String, String] => IndexTablesOptions,
    info: LogicalWriteInfo,
    tableProperties: Map[String, String] = Map.empty,
    streamingBatch: Option[StreamingBatch] = None)
    extends WriteBuilder with SupportsOverwrite with SupportsDynamicOverwrite {
  import IndexTables4SparkWriteBuilder._

  private var request: Request = AppendRequest

  override def truncate(): WriteBuilder = { request = TruncateRequest; this }

  override def overwrite(filters: Array[Filter]): WriteBuilder = {
    request =
      if (filters.forall(_.isInstanceOf[AlwaysTrue])) TruncateRequest
      else FilterRequest(filters.toSeq)
    this
  }

  override def overwriteDynamicPartitions(): WriteBuilder = {
    request = DynamicRequest
    this
  }

  override def build(): Write = {
    // An index over Parquet files it does not own takes its rows from them only.
    existing.foreach(TableLayout.checkWritable(_, tableName))
    val opts = resolveOptions(info.options().asCaseSensitiveMap().asScala.toMap)
    if (!opts.get(IndexTablesConf.OptimizeWriteEnabled)) new Write {
      override def description(): String = s"IndexTablesWrite($tableName, $request)"
      // The physical plan shows a write by its toString.
      override def toString: String = description()
      override def toBatch: BatchWrite = asStreamBatch(planBatchWrite(None))
      override def toStreaming: StreamingWrite = planStreamingWrite(None)
    }
    else new OptimizedWrite(optimizedSpec(opts))
  }

  /**
   * A write that asks Spark to shuffle its rows first (`spark.indextables.write.optimizeWrite.*`),
   * so that each task writes splits near the target size whatever the input's partitioning:
   *  - hash: clustered on the partition columns (the first column of an unpartitioned table),
   *    not strictly, so AQE rebalances skew, with the advisory partition size of
   *    [[WriteSizeEstimator]];
   *  - balanced: exactly `defaultParallelism` tasks, strictly, over ranges of the same
   *    columns; tasks roll to a new split at maxSplitSize (once the table's history gives its
   *    bytes per row);
   *  - none: no shuffle.
   */
  private final class OptimizedWrite(spec: OptimizedWriteSpec)
      extends Write with RequiresDistributionAndOrdering {
    private val hash = spec.distributionMode == "hash"
    private val balanced = spec.distributionMode == "balanced"

    override def description(): String = {
      val sizing =
        if (hash) s", advisoryPartitionSize=${spec.estimate.advisoryBytes} (${spec.estimate.mode})"
        else ""
      val rolling = spec.estimate.maxRowsPerSplit.map(n => s", maxRowsPerSplit=$n").getOrElse("")
      s"IndexTablesWrite($tableName, $request, optimizeWrite=${spec.distributionMode}$sizing$rolling)"
    }
    override def toString: String = description()
    override def toBatch: BatchWrite = asStreamBatch(planBatchWrite(Some(spec)))
    override def toStreaming: StreamingWrite = planStreamingWrite(Some(spec))

    // Balanced: Spark takes a partition count only with a distribution, so a range one on the
    // same columns (sampled bounds spread the rows evenly over the tasks).
    override def requiredDistribution(): Distribution = {
      val columns = clusteringColumns.map(c => Expressions.column(quoted(c)))
      if (hash) Distributions.clustered(columns.map(c => c: Expression).toArray)
      else if (balanced)
        Distributions.ordered(columns.map(c =>
          Expressions.sort(c, SortDirection.ASCENDING)).toArray)
      else Distributions.unspecified()
    }

    override def distributionStrictlyRequired(): Boolean = !hash

    override def requiredNumPartitions(): Int =
      if (balanced) SparkSession.active.sparkContext.defaultParallelism else 0

    override def advisoryPartitionSizeInBytes(): Long =
      if (hash) spec.estimate.advisoryBytes else 0L

    override def requiredOrdering(): Array[SortOrder] = Array.empty
  }

  /** A batch of a V1 stream sink (`core.IndexTablesStreamSink`) commits as that batch. */
  private def asStreamBatch(batch: IndexTables4SparkBatchWrite): BatchWrite =
    streamingBatch.map(new StreamingBatchWrite(batch, _)).getOrElse(batch)

  /** A column name as Spark's parser reads it, whatever characters it holds. */
  private def quoted(name: String): String = "`" + name.replace("`", "``") + "`"

  /** The table's partition columns, or else the data's first column. */
  private def clusteringColumns: Seq[String] = {
    val partitions = existing.map(_.metadata.partitionColumns).getOrElse(requestedPartitionColumns)
    if (partitions.nonEmpty) partitions else info.schema().fieldNames.headOption.toSeq
  }

  private def optimizedSpec(opts: IndexTablesOptions): OptimizedWriteSpec = {
    import IndexTablesConf._
    val target = opts.get(OptimizeWriteTargetSplitSize)
    val estimate = WriteSizeEstimator.estimate(
      existing,
      TransactionLog.forTable(
        tablePath,
        SparkSession.active.sessionState.newHadoopConfWithOptions(opts.hadoopOptions),
        opts.logSettings,
        opts.fileSystemOptions),
      target,
      opts.get(OptimizeWriteMaxSplitSize),
      // Set, the seed's ratio; unset, the one measured for the layout.
      opts.raw(OptimizeWriteSamplingRatio.key).map(_ => opts.get(OptimizeWriteSamplingRatio)),
      opts.get(OptimizeWriteMinRowsForEstimation),
      layout(opts, info.options().asCaseSensitiveMap().asScala.toMap),
      existing.filter(s => TableLayout.of(s.protocol) == TableLayout.Companion).map { snap =>
        val conf = SparkSession.active.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)
        val root = TableLayout.parquetRoot(snap)
        // The sizes the log recorded; a storage call only for a split written without them.
        (a: AddAction) => {
          val recorded = a.companionSizes
          a.companionSourceFiles.getOrElse(Nil).map { f =>
            recorded.getOrElse(
              f, {
                val p = TablePaths.resolve(root, f)
                LogStore.forPath(p, conf).status(p).length
              })
          }.sum
        }
      }
    )
    OptimizedWriteSpec(opts.get(OptimizeWriteDistributionMode), target, estimate)
  }

  /**
   * The rows this write replaces. An overwrite by the save path (a truncate) becomes a
   * replaceWhere with the `replaceWhere` option, and a dynamic partition overwrite with
   * `partitionOverwriteMode=dynamic` as an option or in the session (the option wins), on a
   * partitioned table; the DataSource V2 overwrites say which they are.
   */
  private def writeMode(spark: SparkSession, options: Map[String, String]): WriteMode = {
    def option(key: String) =
      options.collectFirst { case (k, v) if k.equalsIgnoreCase(key) => v.trim }
    val partitioned = existing.exists(_.metadata.partitionColumns.nonEmpty)
    request match {
      case AppendRequest => WriteMode.Append
      case FilterRequest(filters) =>
        WriteMode.ReplaceWhere(filters.map(_.toString).mkString(" AND "), filters)
      case DynamicRequest =>
        if (partitioned) WriteMode.DynamicPartitions else WriteMode.Truncate
      case TruncateRequest =>
        val dynamicOption = option(PartitionOverwriteModeOption).map { v =>
          v.toLowerCase(Locale.ROOT) match {
            case "dynamic" => true
            case "static" => false
            case _ => throw IndexTablesErrors.invalidOption(
                PartitionOverwriteModeOption,
                v,
                "static or dynamic")
          }
        }
        val dynamic = dynamicOption.getOrElse(
          spark.sessionState.conf.partitionOverwriteMode.toString.equalsIgnoreCase("dynamic"))
        option(ReplaceWhereOption) match {
          case Some(_) if dynamicOption.contains(true) =>
            throw IndexTablesErrors.replaceWhereWithDynamicOverwrite(tableName)
          case Some(predicate) =>
            ReplaceWhereRows.parse(spark, tableName, predicate, info.schema())
          case None if dynamic && partitioned => WriteMode.DynamicPartitions
          case None => WriteMode.Truncate
        }
    }
  }

  /**
   * One micro-batch of a streaming query, planned as a batch write on the table's newest
   * snapshot: Spark keeps one table object for the whole query, whose snapshot is the one the
   * query started on. Spark asks for a truncate in the `complete` output mode, so the batch
   * replaces the table's rows; otherwise it appends.
   */
  private def planStreamingWrite(optimized: Option[OptimizedWriteSpec]): StreamingWrite = {
    val opts = resolveOptions(info.options().asCaseSensitiveMap().asScala.toMap)
    val latest = TransactionLog.forTable(
      tablePath,
      SparkSession.active.sessionState.newHadoopConfWithOptions(opts.hadoopOptions),
      opts.logSettings,
      opts.fileSystemOptions).latestSnapshotOption()
    latest.foreach(TableLayout.checkWritable(_, tableName))
    val current = new IndexTables4SparkWriteBuilder(
      tableName,
      tablePath,
      requestedPartitionColumns,
      latest,
      resolveOptions,
      info,
      tableProperties)
    current.request = request
    new IndexTables4SparkStreamingWrite(
      tableName,
      info.queryId(),
      if (request == TruncateRequest) "Complete" else "Append",
      current.planBatchWrite(optimized),
      StreamingTxn.recordedEpoch(latest, info.queryId())
    )
  }

  private def planBatchWrite(optimized: Option[OptimizedWriteSpec]): IndexTables4SparkBatchWrite = {
    val spark = SparkSession.active
    val writeOptions = info.options().asCaseSensitiveMap().asScala.toMap
    val opts = resolveOptions(writeOptions)
    IndexTablesOptions.checkWriteOptions(writeOptions, opts)
    PurgeOnWrite.validate(opts)
    val dataSchema = info.schema()
    val mode = writeMode(spark, writeOptions)
    // Only a whole-table overwrite may change the table's schema, partitioning and indexing.
    val replacesTable = mode == WriteMode.Truncate
    val partitionColumns = existing match {
      case Some(snap) if !replacesTable =>
        checkPartitioning(tableName, snap.metadata.partitionColumns, requestedPartitionColumns)
        snap.metadata.partitionColumns
      case _ => requestedPartitionColumns
    }
    val (indexSchema, evolved) = existing match {
      case Some(snap) if !replacesTable =>
        val mergeSchema = opts.get(IndexTablesConf.MergeSchema)
        val tableSchema = TableIndexing.tableSchema(snap)
        val merged = SchemaEvolution.merge(tableName, tableSchema, dataSchema, mergeSchema)
        val schema = keptIndexing(snap, opts, dataSchema, partitionColumns)
        (schema, if (merged != tableSchema) Some(SchemaChange(tableSchema, merged)) else None)
      case Some(_) =>
        // A whole-table overwrite keeps the indexing the table recorded for the columns it
        // still has, unless the write asks otherwise.
        val recorded =
          IndexingRequest.resolve(opts.copy(options = Map.empty, sessionConf = Map.empty))
        val request = recorded.restrictedTo(dataSchema).overlaidBy(asked(opts))
        (TableIndexSchema.resolve(dataSchema, partitionColumns, request), None)
      case None => (
          TableIndexSchema.resolve(dataSchema, partitionColumns, IndexingRequest.resolve(opts)),
          None)
    }
    val decision = WritePathSelector.select(indexSchema)
    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)
    val companion =
      if (layout(opts, writeOptions) == TableLayout.Companion)
        Some(CompanionWrite.plan(spark, hadoopConf, indexSchema, tableName))
      else None
    val rowCheck = mode match {
      case WriteMode.ReplaceWhere(predicate, filters) =>
        Some(RowCheck(tableName, predicate, ReplaceWhereRows.bound(spark, filters, dataSchema)))
      case _ => None
    }
    val plan = WritePlan(
      tablePath = tablePath,
      hadoopConf = new SerializableHadoopConf(hadoopConf),
      writeSchema = dataSchema,
      indexSchema = indexSchema,
      path = decision.path,
      timeZone = spark.sessionState.conf.sessionLocalTimeZone,
      heapSize = opts.get(IndexTablesConf.WriterHeapSize),
      batchRows = opts.get(IndexTablesConf.ArrowBatchRows),
      // An optimized write also rolls at maxSplitSize, as the table's bytes per row estimate it.
      maxRowsPerSplit = (opts.get(IndexTablesConf.MaxRowsPerSplit) +:
        optimized.flatMap(_.estimate.maxRowsPerSplit).toSeq).min,
      statsTruncateAt = opts.get(IndexTablesConf.StatsTruncationMaxLength),
      rowCheck = rowCheck,
      schemaChange = evolved,
      optimized = optimized,
      companion = companion,
      tableProperties = tableProperties
    )
    new IndexTables4SparkBatchWrite(
      tableName,
      plan,
      mode,
      existing,
      TransactionLog.forTable(tablePath, hadoopConf, opts.logSettings, opts.fileSystemOptions),
      opts.fileSystemOptions,
      MergeOnWriteSettings.of(opts),
      opts
    )
  }

  /**
   * How a write into an existing table indexes the data: each column the table's splits hold
   * keeps how they hold it (their doc mappings say; an option that asks otherwise fails, naming
   * both), and a new column takes the write's options.
   */
  private def keptIndexing(
      snap: Snapshot,
      opts: IndexTablesOptions,
      data: StructType,
      partitionColumns: Seq[String]): TableIndexSchema = {
    val current = TableIndexing.ofTable(snap)
    val requested = TableIndexSchema.resolve(data, partitionColumns, asked(opts))
    val askedColumns = asked(opts).columns
    val fields = requested.fields.map { req =>
      current.field(req.name) match {
        case Some(cur) =>
          // A companion split's fast fields and store follow the layout, not the options.
          val same =
            if (TableLayout.of(snap.protocol) == TableLayout.Companion)
              cur.copy(dataType = req.dataType, fast = req.fast, stored = req.stored) == req
            else cur.copy(dataType = req.dataType) == req
          if (!same && askedColumns.contains(req.name.toLowerCase(Locale.ROOT)))
            throw IndexTablesErrors.typemapChanged(
              tableName,
              req.name,
              describe(cur),
              describe(req))
          cur.copy(dataType = req.dataType)
        case None => req
      }
    }
    requested.copy(fields = fields)
  }

  /**
   * The layout of the table written: an existing table's own (a write option asking for the
   * other fails), else the write's option, the session's setting or a CREATE TABLE property.
   */
  private def layout(opts: IndexTablesOptions, writeOptions: Map[String, String]): TableLayout =
    existing match {
      case Some(snap) =>
        val own = TableLayout.of(snap.protocol)
        val asked = IndexTablesOptions(writeOptions).raw(IndexTablesConf.WriteLayout.key)
          .map(_ => TableLayout(IndexTablesOptions(writeOptions).get(IndexTablesConf.WriteLayout)))
        asked.filter(_ != own).foreach { a =>
          throw IndexTablesErrors.layoutMismatch(tableName, own.name, a.name)
        }
        own
      case None => TableLayout(opts.get(IndexTablesConf.WriteLayout))
    }

  /** What this write itself asks of the index (its options and the session's). */
  private def asked(opts: IndexTablesOptions): IndexingRequest =
    IndexingRequest.resolve(opts.copy(tableProps = Map.empty))

  private def describe(f: IndexedField): String = {
    val flags = Seq(
      Some(f.kind.name),
      f.tokenizer.map(t => s"tokenizer $t"),
      Some(if (f.fast) "fast" else "not fast"),
      if (!f.indexed) Some("not indexed") else None,
      if (!f.stored) Some("not stored") else None
    ).flatten
    flags.mkString(", ")
  }
}

object IndexTables4SparkWriteBuilder {

  /**
   * A write into an existing table that names its partitioning (`partitionBy`) must name the
   * table's, as Delta's must; one that names none takes the table's.
   */
  def checkPartitioning(tableName: String, recorded: Seq[String], requested: Seq[String]): Unit =
    if (requested.nonEmpty &&
      requested.map(_.toLowerCase(Locale.ROOT)) != recorded.map(_.toLowerCase(Locale.ROOT)))
      throw IndexTablesErrors.partitioningMismatch(tableName, recorded, requested)

  val ReplaceWhereOption = "replaceWhere"
  val PartitionOverwriteModeOption = "partitionOverwriteMode"

  /** What Spark asked of the builder. */
  private sealed trait Request
  private case object AppendRequest extends Request
  private case object TruncateRequest extends Request
  private final case class FilterRequest(filters: Seq[Filter]) extends Request
  private case object DynamicRequest extends Request
}
