package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{LongType, MapType, StringType, TimestampType}
import org.apache.spark.sql.{Row, SparkSession}

/**
 * `DESCRIBE INDEXTABLES TRANSACTION LOG '<path>' | <table>`: one row per live split at the
 * latest version, with its statistics: path string, partition_values map<string,string>,
 * size long, num_records long, modification_time timestamp, min_values map<string,string>,
 * max_values map<string,string>, footer_start_offset long, footer_end_offset long,
 * doc_mapping_ref string. Statistics a split does not record are null.
 */
case class DescribeIndexTablesTransactionLogCommand(target: IndexTablesCommandTarget)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("path", StringType, nullable = false)(),
    AttributeReference("partition_values", MapType(StringType, StringType))(),
    AttributeReference("size", LongType, nullable = false)(),
    AttributeReference("num_records", LongType)(),
    AttributeReference("modification_time", TimestampType)(),
    AttributeReference("min_values", MapType(StringType, StringType))(),
    AttributeReference("max_values", MapType(StringType, StringType))(),
    AttributeReference("footer_start_offset", LongType)(),
    AttributeReference("footer_end_offset", LongType)(),
    AttributeReference("doc_mapping_ref", StringType)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    target.log(spark).snapshot().allFiles.map { a =>
      Row(
        a.path,
        a.partitionValues,
        a.size,
        a.numRecords.orNull,
        new java.sql.Timestamp(a.modificationTime),
        a.minValues.orNull,
        a.maxValues.orNull,
        a.footerStartOffset.orNull,
        a.footerEndOffset.orNull,
        a.docMappingRef.orNull
      )
    }
  }
}
