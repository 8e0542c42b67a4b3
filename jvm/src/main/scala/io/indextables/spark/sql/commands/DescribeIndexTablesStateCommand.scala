package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{ArrayType, BooleanType, DoubleType, IntegerType, LongType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.transaction.TableLayout

/**
 * `DESCRIBE INDEXTABLES STATE '<path>' | <table>`: the table's latest state, one row:
 * table_path string, version long, num_files long, num_records long (the rows readers see: the
 * splits' records less their deleted rows; null when a split does not record its count), size_in_bytes long, num_tombstones long, partition_columns array<string>,
 * min_reader_version int, min_writer_version int, schema string (Spark's JSON schema),
 * checkpoint_version long and checkpoint_format string (`avro-state` or `json`; null without a
 * checkpoint), state_manifests int (the Avro state's manifests, null when the snapshot was not
 * read from one), tombstone_ratio double (the share of that state's entries that are
 * tombstones), needs_compaction boolean (the next checkpoint would compact the state: too many
 * tombstones or manifests, by `spark.indextables.state.compaction.*`), num_deletion_vectors
 * long (splits with deleted rows) and num_deleted_rows long (rows their vectors delete); for a
 * companion index of another table's files, source_format string, source_path string and
 * source_version long (the source table's version it reflects), else null.
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
    AttributeReference("schema", StringType, nullable = false)(),
    AttributeReference("checkpoint_version", LongType)(),
    AttributeReference("checkpoint_format", StringType)(),
    AttributeReference("state_manifests", IntegerType)(),
    AttributeReference("tombstone_ratio", DoubleType, nullable = false)(),
    AttributeReference("needs_compaction", BooleanType, nullable = false)(),
    AttributeReference("num_deletion_vectors", LongType, nullable = false)(),
    AttributeReference("num_deleted_rows", LongType, nullable = false)(),
    AttributeReference("source_format", StringType)(),
    AttributeReference("source_path", StringType)(),
    AttributeReference("source_version", LongType)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val log = target.log(spark)
    val s = log.snapshot()
    val checkpoint = log.lastCheckpoint()
    val state = s.stateBase.map(_.manifest)
    val entries = state.map(_.manifests.map(_.numEntries).sum).getOrElse(0L)
    val tombstoneRatio = state.filter(_ => entries > 0)
      .map(_.tombstones.size.toDouble / entries).getOrElse(0.0)
    val needsCompaction = state.exists(m =>
      tombstoneRatio > log.settings.compactionTombstoneThreshold ||
        m.manifests.size > log.settings.compactionMaxManifests)
    val records =
      if (s.allFiles.forall(_.numRecords.isDefined)) s.allFiles.flatMap(_.liveRecords).sum
      else null
    val vectors = s.allFiles.flatMap(_.deletionVector)
    val conf = s.metadata.configuration
    val source = conf.get(TableLayout.SourceTablePathKey)
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
      s.metadata.schemaString,
      checkpoint.map(_.version).orNull,
      checkpoint.map(c => c.format.getOrElse("json")).orNull,
      state.map(_.manifests.size).orNull,
      tombstoneRatio,
      needsCompaction,
      vectors.size.toLong,
      vectors.map(_.cardinality).sum,
      source.map(_ => conf.getOrElse(TableLayout.SourceFormatKey, "parquet")).orNull,
      source.orNull,
      conf.get(TableLayout.SourceVersionKey).map(v => Long.box(v.toLong)).orNull
    ))
  }
}
