package io.indextables.spark.sync

import java.io.{ByteArrayInputStream, IOException}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.{HadoopReadOptions, ParquetReadOptions}
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.spark.sql.execution.datasources.parquet.{ParquetReadSupport, ParquetToSparkSchemaConverter}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, Metadata, StructType}

import io.indextables.spark.storage.LogStore

/**
 * Reads what a Parquet file's footer says, through a [[LogStore]] (two ranged reads, wherever the
 * file lives): its Spark schema, as Spark's Parquet source derives it (the schema Spark recorded
 * in the footer, else the Parquet types converted with Spark's defaults), and its row count.
 * Stateless; runs on the driver and on executors.
 */
object ParquetFooters {
  private val Magic = "PAR1".getBytes(StandardCharsets.US_ASCII)

  // Parquet's read options with their defaults: Parquet 1.17 (Spark 4.2) reads a footer's Thrift
  // message with the size limit of its options' configuration, and a converter made without
  // options has a limit of -1, so that every footer fails ("Max message size must be positive").
  private lazy val ReadOptions: ParquetReadOptions =
    HadoopReadOptions.builder(new Configuration(false)).build()

  /** One file's footer: its data columns and rows. */
  final case class Footer(schema: StructType, rows: Long)

  /** The footer of the Parquet file at `path`, `length` bytes long. */
  def read(store: LogStore, path: Path, length: Long): Footer = {
    if (length < 12) throw new IOException(s"$path is not a Parquet file: it is $length bytes")
    val tail = store.readRange(path, length - 8, 8)
    if (!java.util.Arrays.equals(tail.drop(4), Magic)) {
      throw new IOException(s"$path is not a Parquet file: it does not end with PAR1")
    }
    val footerLength = ByteBuffer.wrap(tail, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt
    if (footerLength <= 0 || footerLength > length - 12) {
      throw new IOException(s"$path is not a Parquet file: its footer length is $footerLength")
    }
    val bytes = store.readRange(path, length - 8 - footerLength, footerLength)
    val metadata = new ParquetMetadataConverter(ReadOptions).readParquetMetadata(
      new ByteArrayInputStream(bytes),
      ParquetMetadataConverter.NO_FILTER)
    val file = metadata.getFileMetaData
    val recorded = Option(file.getKeyValueMetaData.get(ParquetReadSupport.SPARK_METADATA_KEY))
      .flatMap(json => Try(DataType.fromJson(json)).toOption)
      .collect { case s: StructType => s }
    val schema =
      recorded.getOrElse(new ParquetToSparkSchemaConverter(new SQLConf).convert(file.getSchema))
    Footer(schema, metadata.getBlocks.asScala.map(_.getRowCount).sum)
  }

  /** Whether two schemas hold the same columns of the same types, nullability aside. */
  def sameColumns(a: StructType, b: StructType): Boolean = asNullable(a) == asNullable(b)

  /** `schema` with every column nullable, as Spark's file sources read a file's columns. */
  def asNullable(schema: StructType): StructType = nullable(schema).asInstanceOf[StructType]

  private def nullable(dt: DataType): DataType = dt match {
    case s: StructType =>
      StructType(s.fields.map(f =>
        f.copy(dataType = nullable(f.dataType), nullable = true, metadata = Metadata.empty)))
    case a: ArrayType => ArrayType(nullable(a.elementType), containsNull = true)
    case m: MapType => MapType(nullable(m.keyType), nullable(m.valueType), true)
    case other => other
  }
}
