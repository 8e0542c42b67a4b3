package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{ArrayType, IntegerType, LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

/**
 * `DESCRIBE INDEXTABLES STATE '<path>' | <table>`: the table's latest state, one row:
 * table_path string, version long, num_files long, num_records long (null when a split does not
 * record it), size_in_bytes long, num_tombstones long, partition_columns array<string>,
 * min_reader_version int, min_writer_version int, schema string (Spark's JSON schema).
 */
case class DescribeIndexTablesStateCommand(target: IndexTablesCommandTarget)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("table_path", StringType, nullable = false)(),
    AttributeReference("version", LongType, nullable = false)(),
    AttributeReference("num_files", LongType, nullable = false)(),
    AttributeReference("num_records", LongType)(),
    AttributeReference("size_in_bytes", LongType, nullable = false)(),
    AttributeReference("num_tombstones", LongType, nullable = false)(),
    AttributeReference(
      "partition_columns",
      ArrayType(StringType, containsNull = false),
      nullable = false)(),
    AttributeReference("min_reader_version", IntegerType, nullable = false)(),
    AttributeReference("min_writer_version", IntegerType, nullable = false)(),
    AttributeReference("schema", StringType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val log = target.log(spark)
    val s = log.snapshot()
    val records =
      if (s.allFiles.forall(_.numRecords.isDefined)) s.allFiles.flatMap(_.numRecords).sum else null
    Seq(Row(
      log.tablePath.toString,
      s.version,
      s.numFiles.toLong,
      records,
      s.sizeInBytes,
      s.tombstones.size.toLong,
      s.metadata.partitionColumns,
      s.protocol.minReaderVersion,
      s.protocol.minWriterVersion,
      s.metadata.schemaString
    ))
  }
}
