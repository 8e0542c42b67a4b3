package io.indextables.spark.catalyst

import org.apache.spark.sql.catalyst.expressions.{Attribute, EqualTo, Expression, InSubquery, ListQuery, PredicateHelper}
import org.apache.spark.sql.catalyst.plans.{Inner, JoinType, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan, Project, WriteDelta}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.indextables.SparkLineShim
import org.apache.spark.sql.internal.SQLConf

import io.indextables.spark.core.IndexTables4SparkTable

/**
 * Narrows the target scan of a MERGE INTO (and of a DELETE or UPDATE whose condition is
 * `key IN (subquery)`) on an IndexTables table to the rows whose key the source holds,
 * as Spark's dynamic partition pruning does for a join, and as Spark's
 * `RowLevelOperationRuntimeGroupFiltering` does only for group-based (copy-on-write) sources.
 *
 * A merge-on-read statement (`WriteDelta`) joins the whole table with its source; most rows
 * find no partner. This rule puts a `DynamicPruningSubquery` on the target relation, keyed by
 * the first `target.column = <source expression>` conjunct of the join condition: when the job
 * starts, Spark runs the source's distinct keys as a subquery and hands them to the scan as an
 * IN filter (`SupportsRuntimeFiltering`), which the search route turns into split pruning and a
 * term search (`read/IndexTables4SparkScan`). The join still checks every condition, so the
 * rows the statement changes are the same; only the rows read are fewer.
 *
 * It applies only where dropping target rows without a partner cannot change the result: the
 * target on the side an inner, semi or outer-of-the-other-side join drops unmatched rows from
 * (a MERGE with `WHEN NOT MATCHED BY SOURCE` joins fully, and is left alone). It runs before the
 * scan is built (Spark's pre-CBO batch), on the relation Spark reads for the statement, whose
 * scan is always the search route (it reads the row ids). Off with Spark's
 * `spark.sql.optimizer.dynamicPartitionPruning.enabled`.
 */
object RowLevelKeyFilter extends Rule[LogicalPlan] with PredicateHelper {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!SQLConf.get.dynamicPartitionPruningEnabled) plan
    else plan transformDown {
      case w: WriteDelta if ours(w.originalTable) =>
        val target = w.table match {
          case r: DataSourceV2Relation => Some(r.table)
          case _ => None
        }
        target.map(t => SparkLineShim.withQuery(w, narrowed(w.query, t))).getOrElse(w)
    }

  private def ours(p: LogicalPlan): Boolean = p match {
    case r: DataSourceV2Relation => r.table.isInstanceOf[IndexTables4SparkTable]
    case _ => false
  }

  /**
   * `query` with its first join that reads `target` on a prunable side narrowed, or else its
   * first `key IN (subquery)` condition on `target` (which Spark turns into a semi-join after
   * this rule runs).
   */
  private def narrowed(query: LogicalPlan, target: AnyRef): LogicalPlan = {
    val nodes = query.collect { case j: Join => j } ++ query.collect { case f: Filter => f }
    val rewrites = nodes.iterator.flatMap {
      case j: Join => withKeyFilter(j, target).map(j -> _)
      case f: Filter => withSubqueryKeys(f, target).map(f -> _)
      case _ => None
    }
    rewrites.toSeq.headOption match {
      case Some((before, after)) => query transformDown { case p if p eq before => after }
      case None => query
    }
  }

  /** `f`'s target relation narrowed to the rows an uncorrelated `key IN (subquery)` keeps. */
  private def withSubqueryKeys(f: Filter, target: AnyRef): Option[Filter] =
    relationUnder(f.child).filter(_.table eq target).flatMap { r =>
      splitConjunctivePredicates(f.condition).collectFirst {
        case InSubquery(Seq(a: Attribute), q: ListQuery)
            if q.outerAttrs.isEmpty && q.plan.output.size == 1 && r.outputSet.contains(a) &&
              q.plan.output.head.dataType == a.dataType =>
          f.copy(child = pruned(f.child, r, a, q.plan, q.plan.output.head))
      }
    }

  /** `j` with its target side narrowed to the keys of its other side, if it can be. */
  private def withKeyFilter(j: Join, target: AnyRef): Option[Join] = j match {
    case Join(left, right, joinType, Some(cond), _) =>
      keyOn(left, right, cond, target, joinType, targetLeft = true)
        .map { case (r, key, build) => j.copy(left = pruned(left, r, key, right, build)) }
        .orElse(keyOn(right, left, cond, target, joinType, targetLeft = false)
          .map { case (r, key, build) => j.copy(right = pruned(right, r, key, left, build)) })
    case _ => None
  }

  private def prunable(joinType: JoinType, targetLeft: Boolean): Boolean = joinType match {
    case Inner => true
    case LeftSemi | RightOuter => targetLeft
    case LeftOuter => !targetLeft
    case _ => false
  }

  /**
   * The target relation under `side` (through projections and filters only), its key column,
   * and the other side's expression it must equal, when the join can drop `side`'s unmatched
   * rows.
   */
  private def keyOn(
      side: LogicalPlan,
      other: LogicalPlan,
      cond: Expression,
      target: AnyRef,
      joinType: JoinType,
      targetLeft: Boolean): Option[(DataSourceV2Relation, Attribute, Expression)] =
    if (!prunable(joinType, targetLeft)) None
    else relationUnder(side).filter(_.table eq target).flatMap { r =>
      splitConjunctivePredicates(cond).collectFirst {
        case EqualTo(a: Attribute, b) if keys(a, b, r, other) => (r, a, b)
        case EqualTo(b, a: Attribute) if keys(a, b, r, other) => (r, a, b)
      }
    }

  private def keys(a: Attribute, b: Expression, r: LogicalPlan, other: LogicalPlan): Boolean =
    r.outputSet.contains(a) && b.deterministic && b.references.nonEmpty &&
      b.references.subsetOf(other.outputSet) && a.dataType == b.dataType

  private def relationUnder(p: LogicalPlan): Option[DataSourceV2Relation] = p match {
    case r: DataSourceV2Relation => Some(r)
    case Project(_, child) => relationUnder(child)
    case Filter(_, child) => relationUnder(child)
    case _ => None
  }

  /** `side` with the runtime filter `key IN (distinct build of other)` over relation `r`. */
  private def pruned(
      side: LogicalPlan,
      r: DataSourceV2Relation,
      key: Attribute,
      other: LogicalPlan,
      build: Expression): LogicalPlan = side transformUp {
    case rel: DataSourceV2Relation if rel eq r =>
      val subquery =
        SparkLineShim.dynamicPruningSubquery(key, other, build, onlyInBroadcast = false)
      Filter(subquery, rel)
  }

}
