package io.indextables.spark.core

import java.util

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.{Expressions, Transform}
import org.apache.spark.sql.indextables.SparkWriteBridge
import org.apache.spark.sql.execution.streaming.Sink
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider, StreamSinkProvider}
import org.apache.spark.sql.streaming.OutputMode
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.sql.{DataFrame, SQLContext, SaveMode, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.transaction.Snapshot

/**
 * The data source behind `format("indextables")`, which Spark reaches through its Java front,
 * [[IndexTables4SparkTableProvider]] (one instance of this per front). Reads go through DataSource V2
 * ([[IndexTables4SparkTable]]). Spark's DataFrameWriter supports only Append and Overwrite for
 * path-based V2 tables, so the tables `getTable` returns do not declare BATCH_WRITE: every
 * path-based save then reaches `createRelation`, which settles the save mode (ErrorIfExists,
 * Ignore, Append, Overwrite) and writes through the same V2 BatchWrite. Nor do they declare
 * STREAMING_WRITE: Spark gives a stream's partitionBy columns only to `createSink`
 * ([[IndexTablesStreamSink]]), whose batches write through it too.
 */
class IndexTables4SparkTableSource
    extends TableProvider with CreatableRelationProvider with StreamSinkProvider {

  override def supportsExternalMetadata(): Boolean = true

  // Spark makes a provider per DataFrameReader.load and asks it, in turn, for the schema, the
  // partitioning and the table: they share one read of the log.
  private var lastLoad: Option[(Map[String, String], Option[Snapshot])] = None

  private def latest(opts: Map[String, String]): Option[Snapshot] = lastLoad match {
    case Some((o, snap)) if o == opts => snap
    case _ =>
      val snap = TableLogResolver.load(TableLogResolver.path(opts), opts)
      lastLoad = Some(opts -> snap)
      snap
  }

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    val opts = options.asCaseSensitiveMap().asScala.toMap
    val snap =
      latest(opts).getOrElse(throw IndexTablesErrors.tableNotFound(TableLogResolver.path(opts)))
    DataType.fromJson(snap.metadata.schemaString).asInstanceOf[StructType]
  }

  override def inferPartitioning(options: CaseInsensitiveStringMap): Array[Transform] = {
    val opts = options.asCaseSensitiveMap().asScala.toMap
    latest(opts).map(_.metadata.partitionColumns)
      .getOrElse(Nil).map(c => Expressions.identity(c): Transform).toArray
  }

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: util.Map[String, String]): Table = {
    val partitionColumns = partitioning.toSeq.map {
      case t if t.name() == "identity" && t.references().length == 1 =>
        t.references().head.fieldNames().mkString(".")
      case t => throw IndexTablesErrors.unsupportedPartitioning(t.toString)
    }
    val props = properties.asScala.toMap
    val known = lastLoad.collect { case (o, snap) if o == props => snap }
    new IndexTables4SparkTable(
      TableLogResolver.path(props),
      schema,
      partitionColumns,
      props,
      knownSnapshot = known)
  }

  override def createRelation(
      sqlContext: SQLContext,
      mode: SaveMode,
      parameters: Map[String, String],
      data: DataFrame): BaseRelation = {
    val path = TableLogResolver.path(parameters)
    val exists = TableLogResolver.load(path, parameters).isDefined
    mode match {
      case SaveMode.ErrorIfExists if exists => throw IndexTablesErrors.tableExists(path)
      case SaveMode.Ignore if exists =>
      case _ =>
        val partitionKey = "__partition_columns"
        val partitionColumns = parameters.get(partitionKey).toSeq.flatMap { json =>
          new ObjectMapper().readValue(json, classOf[Array[String]]).toSeq
        }
        val options = parameters - partitionKey
        val table = new IndexTables4SparkTable(
          path,
          data.schema,
          partitionColumns,
          options,
          acceptsWrites = true)
        SparkWriteBridge.write(
          sqlContext.sparkSession,
          table,
          data,
          overwrite = mode == SaveMode.Overwrite,
          options)
    }
    val s = data.schema
    new BaseRelation {
      override def sqlContext: SQLContext = SparkSession.active.sqlContext
      override def schema: StructType = s
    }
  }

  override def createSink(
      sqlContext: SQLContext,
      parameters: Map[String, String],
      partitionColumns: Seq[String],
      outputMode: OutputMode): Sink = {
    new IndexTablesStreamSink(
      sqlContext,
      TableLogResolver.path(parameters),
      parameters,
      partitionColumns,
      outputMode)
  }
}

object IndexTables4SparkTableSource {

  /** `format("indextables")`, as the Java front declares it to Spark's service loader. */
  val ShortName: String = TableProviderFront.SHORT_NAME
}
