package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{BooleanType, LongType, MapType, StringType, TimestampType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.transaction.{AddAction, MergeSkipAction, MetadataAction, ProtocolAction, RemoveAction}

/**
 * `DESCRIBE INDEXTABLES TRANSACTION LOG '<path>' | <table> [INCLUDE ALL]`: one row per live split
 * at the latest version, with its statistics: path string, partition_values map<string,string>,
 * size long, num_records long, modification_time timestamp, min_values map<string,string>,
 * max_values map<string,string>, footer_start_offset long, footer_end_offset long,
 * doc_mapping_ref string. Statistics a split does not record are null.
 *
 * With INCLUDE ALL, every action of every version file the log still holds, oldest first, each
 * row led by version long and action_type string (protocol, metadata, add, remove, mergeskip)
 * and ended by data_change boolean and details string (what the other columns do not show:
 * reader and writer versions, partition columns, a skip's reason). Columns an action does not
 * have are null; a remove's modification_time is its deletion time.
 */
case class DescribeIndexTablesTransactionLogCommand(
    target: IndexTablesCommandTarget,
    includeAll: Boolean = false)
    extends LeafRunnableCommand {

  private def splitColumns: Seq[AttributeReference] = Seq(
    AttributeReference("path", StringType, nullable = includeAll)(),
    AttributeReference("partition_values", MapType(StringType, StringType))(),
    AttributeReference("size", LongType, nullable = includeAll)(),
    AttributeReference("num_records", LongType)(),
    AttributeReference("modification_time", TimestampType)(),
    AttributeReference("min_values", MapType(StringType, StringType))(),
    AttributeReference("max_values", MapType(StringType, StringType))(),
    AttributeReference("footer_start_offset", LongType)(),
    AttributeReference("footer_end_offset", LongType)(),
    AttributeReference("doc_mapping_ref", StringType)()
  )

  override val output: Seq[Attribute] =
    if (!includeAll) splitColumns
    else
      Seq(
        AttributeReference("version", LongType, nullable = false)(),
        AttributeReference("action_type", StringType, nullable = false)()) ++ splitColumns ++
        Seq(
          AttributeReference("data_change", BooleanType)(),
          AttributeReference("details", StringType)())

  override def run(spark: SparkSession): Seq[Row] = {
    val log = target.log(spark)
    if (!includeAll) log.snapshot().allFiles.map(addColumns).map(Row.fromSeq)
    else
      log.listVersions().flatMap { v =>
        log.actionsOf(v).map {
          case a: AddAction =>
            Row.fromSeq(Seq[Any](v, "add") ++ addColumns(a) ++ Seq(a.dataChange, null))
          case r: RemoveAction =>
            val time = r.deletionTimestamp.map(new java.sql.Timestamp(_)).orNull
            Row.fromSeq(Seq(
              v,
              "remove",
              r.path,
              r.partitionValues.orNull,
              r.size.orNull,
              null,
              time,
              null,
              null,
              null,
              null,
              null,
              r.dataChange,
              null))
          case m: MergeSkipAction =>
            Row.fromSeq(Seq[Any](v, "mergeskip", m.path) ++ Seq.fill(9)(null) ++
              Seq(null, s"operation=${m.operation}, reason=${m.reason}, skipCount=${m.skipCount}"))
          case m: MetadataAction =>
            Row.fromSeq(Seq[Any](v, "metadata") ++ Seq.fill(10)(null) ++ Seq(
              null,
              s"id=${m.id}, partitionColumns=${m.partitionColumns.mkString("[", ",", "]")}"))
          case p: ProtocolAction =>
            Row.fromSeq(Seq[Any](v, "protocol") ++ Seq.fill(10)(null) ++ Seq(
              null,
              s"minReaderVersion=${p.minReaderVersion}, minWriterVersion=${p.minWriterVersion}"))
        }
      }
  }

  private def addColumns(a: AddAction): Seq[Any] = Seq(
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
