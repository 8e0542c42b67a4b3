package io.indextables.spark.write

import java.util.Locale

import scala.collection.JavaConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write.{BatchWrite, LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.types.{DataType, StructType}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.schema.TableIndexSchema
import io.indextables.spark.transaction.{Snapshot, TransactionLog}
import io.indextables.spark.util.SerializableHadoopConf

/**
 * Plans a write on the driver: checks the data against the table (types, schema, partitioning,
 * index types) before any task starts, so bad input fails with nothing written.
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
    extends WriteBuilder with SupportsTruncate {

  private var overwrite = false

  override def truncate(): WriteBuilder = { overwrite = true; this }

  override def build(): Write = new Write {
    override def description(): String = s"IndexTablesWrite($tableName, overwrite=$overwrite)"
    override def toBatch: BatchWrite = planBatchWrite()
  }

  private def planBatchWrite(): BatchWrite = {
    val spark = SparkSession.active
    val writeOptions = info.options().asCaseSensitiveMap().asScala.toMap
    val opts = resolveOptions(writeOptions)
    val dataSchema = info.schema()
    val partitionColumns = existing match {
      case Some(snap) if !overwrite => snap.metadata.partitionColumns
      case _ => requestedPartitionColumns
    }
    val typemap = existing match {
      case Some(snap) if !overwrite =>
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
      statsTruncateAt = opts.get(IndexTablesConf.StatsTruncationMaxLength)
    )
    new IndexTables4SparkBatchWrite(
      plan,
      overwrite,
      TransactionLog.forTable(tablePath, hadoopConf, opts.logSettings, opts.fileSystemOptions))
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
