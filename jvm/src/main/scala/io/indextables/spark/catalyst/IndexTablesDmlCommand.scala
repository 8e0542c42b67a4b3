package io.indextables.spark.catalyst

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, GenericInternalRow}
import org.apache.spark.sql.catalyst.plans.logical.{CommandResult, DeleteFromTable, DeleteFromTableWithFilters, LogicalPlan, MergeIntoTable, UnaryCommand, UpdateTable, WriteDelta}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.connector.write.RowLevelOperation
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DeleteFromTableExec, TruncateTableExec, WriteDeltaExec}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy, UnaryExecNode}
import org.apache.spark.sql.types.LongType

import io.indextables.spark.core.IndexTables4SparkTable
import io.indextables.spark.write.RowLevelWrite

/**
 * A DELETE, UPDATE or MERGE INTO on an IndexTables table, as the statement Spark runs: its one
 * result row says how many rows it changed, with Delta Lake's columns (`num_affected_rows`; for
 * MERGE also `num_updated_rows`, `num_deleted_rows`, `num_inserted_rows`). Spark 3.5's own
 * row-level commands return nothing. The statement inside is rewritten and written by Spark as
 * ever; [[IndexTablesDmlExec]] runs it and reads the counts its commit recorded.
 */
final case class IndexTablesDmlCommand(child: LogicalPlan, override val output: Seq[Attribute])
    extends UnaryCommand {
  override protected def withNewChildInternal(newChild: LogicalPlan): IndexTablesDmlCommand =
    copy(child = newChild)
}

object IndexTablesDmlCommand {

  /**
   * A resolution rule: wraps a DML statement on an IndexTables table, at the plan's root. Spark
   * 4.2 rewrites a DELETE into its row-level write (`WriteDelta`) before this rule runs, so the
   * rewritten statement is wrapped too.
   */
  object Wrap extends Rule[LogicalPlan] {
    override def apply(plan: LogicalPlan): LogicalPlan = plan match {
      case d: DeleteFromTable if targets(d.table) => wrap(d, merge = false)
      case w: WriteDelta if targets(w.originalTable) =>
        wrap(w, merge = w.operation.command() == RowLevelOperation.Command.MERGE)
      case u: UpdateTable if targets(u.table) => wrap(u, merge = false)
      case m: MergeIntoTable if targets(m.targetTable) => wrap(m, merge = true)
      case other => other
    }
  }

  private def targets(p: LogicalPlan): Boolean = p.exists {
    case r: DataSourceV2Relation => r.table.isInstanceOf[IndexTables4SparkTable]
    case _ => false
  }

  private def wrap(p: LogicalPlan, merge: Boolean): IndexTablesDmlCommand = {
    val names = Seq("num_affected_rows") ++
      (if (merge) Seq("num_updated_rows", "num_deleted_rows", "num_inserted_rows") else Nil)
    IndexTablesDmlCommand(p, names.map(n => AttributeReference(n, LongType, nullable = false)()))
  }
}

/** Plans [[IndexTablesDmlCommand]]: the statement's plan, then its counts. */
object IndexTablesDmlStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case c: IndexTablesDmlCommand =>
      IndexTablesDmlExec(c.output, c.child, planLater(c.child)) :: Nil
    case _ => Nil
  }
}

/**
 * Runs the statement (`child`, Spark's row-level write) and returns one row of the counts its
 * commit recorded, read from the write of `statement` (the optimized logical plan it ran, whose
 * row-level write Spark may already have run as a command of its own); a statement Spark
 * optimized away changed nothing.
 */
final case class IndexTablesDmlExec(
    output: Seq[Attribute],
    statement: LogicalPlan,
    child: SparkPlan)
    extends UnaryExecNode {

  override def executeCollect(): Array[InternalRow] = {
    child.executeCollect()
    val ran = child.collect {
      case d: DeleteFromTableExec => d.table
      case t: TruncateTableExec => t.table
    }
    val result = (writes(statement) ++ ran).collectFirst {
      case r: RowLevelWrite => r.result
      case t: IndexTables4SparkTable if t.metadataDelete.isDefined => t.metadataDelete
    }.flatten
    val counts = result.map(r =>
      Seq(
        r.affectedRows,
        r.updatedRows,
        r.deletedRows,
        r.insertedRows)).getOrElse(Seq(0L, 0L, 0L, 0L))
    Array(new GenericInternalRow(counts.take(output.size).toArray[Any]))
  }

  /**
   * The row-level writes of `p`: a WriteDelta's, or the one a command Spark ran eagerly (its
   * result holds the physical plan it ran) performed; and the table of a DELETE Spark ran on
   * the log alone (`SupportsDeleteV2`), which holds its result (also found in `child`, when
   * Spark planned the DELETE as such from the start).
   */
  private def writes(p: LogicalPlan): Seq[AnyRef] = p match {
    case w: WriteDelta => w.write.toSeq
    case DeleteFromTableWithFilters(r: DataSourceV2Relation, _) => Seq(r.table)
    case c: CommandResult =>
      c.commandPhysicalPlan.collect {
        case w: WriteDeltaExec => w.write
        case d: DeleteFromTableExec => d.table
        case t: TruncateTableExec => t.table
      } ++
        writes(c.commandLogicalPlan)
    case other => other.children.flatMap(writes)
  }

  override protected def doExecute(): RDD[InternalRow] =
    sparkContext.parallelize(executeCollect().toSeq, 1)

  override protected def withNewChildInternal(newChild: SparkPlan): IndexTablesDmlExec =
    copy(child = newChild)
}
