package io.indextables.spark.catalyst

import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, NamedExpression, Predicate, UnsafeProjection}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LogicalPlan, Project}
import org.apache.spark.sql.connector.read.LocalScan
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.read.{IndexTables4SparkScan, LocalScanStrategy}
import io.indextables.spark.read.aggregate.{IndexTables4SparkDriverScan, IndexTables4SparkLogScan}

/**
 * A planner strategy for aggregates over IndexTables scans, run before Spark's own:
 *  - an aggregation the log answered ([[IndexTables4SparkLogScan]]) or the driver answered
 *    ([[IndexTables4SparkDriverScan]]), or a small search the driver answered (the same scan,
 *    from `read/DriverSearch`), with the filter and projection Spark puts over it, becomes one
 *    [[IndexTablesLocalScanExec]] of the final rows, so collecting it runs no task (Spark's own
 *    plan of a local scan under a projection or filter runs one job);
 *  - an aggregate Spark would compute from the rows of a scan whose read requires aggregate
 *    pushdown fails planning with a clear error.
 * Plans nothing otherwise.
 */
object IndexTablesAggregateStrategy extends SparkStrategy with LocalScanStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case Project(
          projectList,
          Filter(cond, r @ DataSourceV2ScanRelation(_, scan: LocalScan, _, _, _)))
        if answered(scan) && cond.deterministic =>
      localScan(projectList, r.output, scan, Some(cond)) :: Nil
    case Project(
          projectList,
          r @ DataSourceV2ScanRelation(_, scan: LocalScan, _, _, _)) if answered(scan) =>
      localScan(projectList, r.output, scan) :: Nil
    case Filter(cond, r @ DataSourceV2ScanRelation(_, scan: LocalScan, _, _, _))
        if answered(scan) && cond.deterministic =>
      localScan(r.output, r.output, scan, Some(cond)) :: Nil
    case r @ DataSourceV2ScanRelation(_, scan: LocalScan, _, _, _) if answered(scan) =>
      localScan(r.output, r.output, scan) :: Nil
    case a: Aggregate =>
      scanBelow(a.child).foreach { scan =>
        if (scan.requiresAggregatePushdown && !scan.aggregatePushed)
          throw IndexTablesErrors.aggregateNotPushed(scan.tablePath, a.simpleString(200))
      }
      Nil
    case _ => Nil
  }

  /** The IndexTables scan right under projections and filters, if any. */
  private def scanBelow(p: LogicalPlan): Option[IndexTables4SparkScan] = p match {
    case Project(_, child) => scanBelow(child)
    case Filter(_, child) => scanBelow(child)
    case DataSourceV2ScanRelation(_, scan: IndexTables4SparkScan, _, _, _) => Some(scan)
    case _ => None
  }

  /**
   * A scan answered before any task: an aggregation from the log or by the driver, or a small
   * search by the driver (`read/DriverSearch`).
   */
  private def answered(scan: LocalScan): Boolean = scan match {
    case _: IndexTables4SparkLogScan | _: IndexTables4SparkDriverScan => true
    case _ => false
  }

  /** The rows of `scan` that `condition` (what Spark left of the filters) keeps, projected. */
  private def localScan(
      projectList: Seq[NamedExpression],
      input: Seq[Attribute],
      scan: LocalScan,
      condition: Option[Expression] = None): SparkPlan = {
    val project = UnsafeProjection.create(projectList, input)
    val keep = condition.map { c =>
      val p = Predicate.create(c, input)
      p.initialize(0)
      p
    }
    val rows = scan.rows().toSeq.filter(r => keep.forall(_.eval(r))).map(r => project(r).copy())
    // What Spark kept of the filters, checked here: EXPLAIN shows it on the scan's line.
    val checked = condition.fold("")(c => s", Filter: ${c.sql}")
    val values = scan.reportDriverMetrics().map(m => m.name -> m.value).toMap
    IndexTablesLocalScanExec(
      projectList.map(_.toAttribute),
      rows,
      scan.description() + checked,
      scan.supportedCustomMetrics().toSeq.map(m => m -> values.getOrElse(m.name, 0L)))
  }
}
