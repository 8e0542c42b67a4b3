package io.indextables.spark.write

import java.util.Locale

import scala.collection.JavaConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write.{BatchWrite, LogicalWriteInfo, SupportsDynamicOverwrite, SupportsOverwrite, Write, WriteBuilder}
import org.apache.spark.sql.sources.{AlwaysTrue, Filter}
import org.apache.spark.sql.types.{DataType, StructType}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.schema.TableIndexSchema
import io.indextables.spark.transaction.{Snapshot, TransactionLog}
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
 */
final class IndexTables4SparkWriteBuilder(
    tableName: String,
    tablePath: String,
    requestedPartitionColumns: Seq[String],
    existing: Option[Snapshot],
    resolveOptions: Map[String, String] => IndexTablesOptions,
    info: LogicalWriteInfo)
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

  override def build(): Write = new Write {
    override def description(): String = s"IndexTablesWrite($tableName, $request)"
    override def toBatch: BatchWrite = planBatchWrite()
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

  private def planBatchWrite(): BatchWrite = {
    val spark = SparkSession.active
    val writeOptions = info.options().asCaseSensitiveMap().asScala.toMap
    val opts = resolveOptions(writeOptions)
    val dataSchema = info.schema()
    val mode = writeMode(spark, writeOptions)
    // Only a whole-table overwrite may change the table's schema, partitioning and index types.
    val replacesTable = mode == WriteMode.Truncate
    val partitionColumns = existing match {
      case Some(snap) if !replacesTable => snap.metadata.partitionColumns
      case _ => requestedPartitionColumns
    }
    val typemap = existing match {
      case Some(snap) if !replacesTable =>
        checkAppendSchema(snap.metadata.schemaString, dataSchema)
        val recorded = IndexTablesOptions.recordedTypemap(snap.metadata.configuration)
        opts.typemap.foreach { case (c, t) =>
          val was = recorded.getOrElse(c, "string")
          if (was != t) throw IndexTablesErrors.typemapChanged(tableName, c, was, t)
        }
        recorded
      case _ => opts.typemap
    }
    val indexSchema = TableIndexSchema.resolve(dataSchema, partitionColumns, typemap)
    val decision = WritePathSelector.select(indexSchema)
    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(writeOptions)
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
      maxRowsPerSplit = opts.get(IndexTablesConf.MaxRowsPerSplit),
      statsTruncateAt = opts.get(IndexTablesConf.StatsTruncationMaxLength),
      rowCheck = rowCheck
    )
    new IndexTables4SparkBatchWrite(
      tableName,
      plan,
      mode,
      existing,
      TransactionLog.forTable(tablePath, hadoopConf, opts.logSettings, opts.fileSystemOptions),
      opts.fileSystemOptions)
  }

  private def checkAppendSchema(tableSchemaJson: String, data: StructType): Unit = {
    val tableSchema = DataType.fromJson(tableSchemaJson).asInstanceOf[StructType]
    def shape(s: StructType) =
      s.fields.map(f => f.name.toLowerCase(Locale.ROOT) -> f.dataType.catalogString).toSeq
    if (shape(tableSchema).sortBy(_._1) != shape(data).sortBy(_._1)) {
      throw IndexTablesErrors.schemaMismatch(tableName, tableSchema.simpleString, data.simpleString)
    }
  }
}

object IndexTables4SparkWriteBuilder {
  val ReplaceWhereOption = "replaceWhere"
  val PartitionOverwriteModeOption = "partitionOverwriteMode"

  /** What Spark asked of the builder. */
  private sealed trait Request
  private case object AppendRequest extends Request
  private case object TruncateRequest extends Request
  private final case class FilterRequest(filters: Seq[Filter]) extends Request
  private case object DynamicRequest extends Request
}
