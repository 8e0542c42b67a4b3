package io.indextables.spark.core

import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{DeltaWriteBuilder, LogicalWriteInfo, RowLevelOperation, SupportsDelta}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.indextables.spark.read.MetadataColumns
import io.indextables.spark.transaction.{Snapshot, TransactionLog}
import io.indextables.spark.write.RowLevelWrite

/**
 * A DELETE on an IndexTables table, as Spark plans it (merge-on-read, `SupportsDelta`): Spark
 * scans the table at the latest version `base` with the statement's condition (pushed to the
 * index like any filter, `indexquery` included), reads each matching row's id (`_split`,
 * `_doc`), and hands the ids to [[RowLevelWrite]], which commits them as deletion vectors.
 * Built on the driver per statement.
 */
final class IndexTablesRowLevelOperation(
    table: IndexTables4SparkTable,
    log: TransactionLog,
    base: Snapshot,
    val command: RowLevelOperation.Command)
    extends SupportsDelta {

  override def description(): String = s"IndexTables $command on ${table.name()}"

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder =
    table.scanBuilderAt(options, base)

  override def rowId(): Array[NamedReference] =
    Array(Expressions.column(MetadataColumns.Split), Expressions.column(MetadataColumns.Doc))

  override def newWriteBuilder(info: LogicalWriteInfo): DeltaWriteBuilder =
    new RowLevelWrite(log, base, table.name(), command.toString, Map.empty)
}
