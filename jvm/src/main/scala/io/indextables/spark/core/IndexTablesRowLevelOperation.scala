package io.indextables.spark.core

import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{DeltaWriteBuilder, LogicalWriteInfo, RowLevelOperation, SupportsDelta}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.indextables.spark.read.MetadataColumns
import io.indextables.spark.transaction.{Snapshot, TransactionLog}
import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.write.{IndexTables4SparkBatchWrite, RowLevelWrite}

/**
 * A DELETE, UPDATE or MERGE on an IndexTables table, as Spark plans it (merge-on-read,
 * `SupportsDelta`): Spark scans the table at the latest version `base` with the statement's
 * condition (pushed to the index like any filter, `indexquery` included), reads each matching
 * row's id (`_split`, `_doc`), and hands deletes, updates (delete and insert) and inserts to
 * [[RowLevelWrite]], which commits them as deletion vectors and new splits in one version.
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

  /**
   * The write: for UPDATE and MERGE, with the plan of an append to the table (its layout,
   * indexing and partitioning), which writes the updated and inserted rows.
   */
  override def newWriteBuilder(info: LogicalWriteInfo): DeltaWriteBuilder = {
    val rows =
      if (command == RowLevelOperation.Command.DELETE) None
      else table.newWriteBuilder(info).build().toBatch match {
        case b: IndexTables4SparkBatchWrite => Some(b.plan)
        case other => throw IndexTablesErrors.internalError(s"an append planned as $other")
      }
    new RowLevelWrite(log, base, table.name(), command.toString, Map.empty, rows)
  }
}
