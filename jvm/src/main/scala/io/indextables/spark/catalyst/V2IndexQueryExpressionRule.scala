package io.indextables.spark.catalyst

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, Cast, ExprId, Expression, Not, Or, PredicateHelper, UpCast}
import org.apache.spark.sql.catalyst.plans.logical.{AnalysisHelper, CTERelationDef, CTERelationRef, DeleteFromTable, Filter, LogicalPlan, Project, RowLevelWrite, SubqueryAlias, UpdateTable, View, WithCTE}
import org.apache.spark.sql.catalyst.streaming.StreamingRelationV2
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.indextables.{SparkCatalogBridge, SparkFilterBridge, SparkLineShim}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.core.IndexTables4SparkTable
import io.indextables.spark.expressions.{IndexQueryAllExpression, IndexQueryExpression}
import io.indextables.spark.filters.{IndexQueryMode, IndexQueryRegistry, MixedBooleanFilter}
import io.indextables.spark.schema.IndexKind

/**
 * Moves IndexQuery predicates into IndexTables scans. Injected twice (see the extensions):
 *  - as a resolution rule it checks every IndexQuery predicate: it must sit in a filter (or a
 *    DELETE's or UPDATE's condition, which Spark turns into a filter over the table's scan) and its
 *    column must resolve, through subquery aliases, views, CTEs and projections, to a data column
 *    of an IndexTables table of the right kind; anything else fails analysis here;
 *  - as an optimizer rule, for a filter directly over an IndexTables relation, it turns every
 *    conjunct that holds an IndexQuery predicate into one [[MixedBooleanFilter]] (the whole
 *    boolean tree, regular predicates included, because an IndexQuery cannot be evaluated row by
 *    row in Spark), stores it in the [[IndexQueryRegistry]] under a fresh key, tags the relation
 *    with the key, and leaves only the other conjuncts to Spark's own pushdown.
 * Runs on the driver, on the thread planning the query; holds no state of its own.
 */
case class V2IndexQueryExpressionRule(
    session: SparkSession,
    phase: V2IndexQueryExpressionRule.Phase)
    extends Rule[LogicalPlan] with PredicateHelper {

  import V2IndexQueryExpressionRule._

  override def apply(plan: LogicalPlan): LogicalPlan = {
    if (!plan.exists(_.expressions.exists(containsIndexQuery))) plan
    else phase match {
      case Resolution => check(plan); intoStreams(plan)
      case Optimization => pushDown(plan)
    }
  }

  private def ctesOf(root: LogicalPlan): Map[Long, LogicalPlan] =
    root.collect { case w: WithCTE => w.cteDefs }.flatten.map(d => d.id -> d.child).toMap

  private def check(root: LogicalPlan): Unit = {
    lazy val ctes = ctesOf(root)
    root.foreach { node =>
      node.expressions.filter(containsIndexQuery).foreach { e =>
        node match {
          case f: Filter if f.resolved => checkAll(e, f.child, ctes)
          // A DELETE's or UPDATE's condition selects rows of its table as a filter would.
          case d: DeleteFromTable if d.resolved => checkAll(e, d.table, ctes)
          case u: UpdateTable if u.resolved && u.condition.contains(e) =>
            checkAll(e, u.table, ctes)
          // A row-level write's condition is the statement's, already moved into its scan.
          case _: RowLevelWrite =>
          case _: Filter =>
          case other if other.resolved =>
            throw IndexTablesErrors.indexQueryOutsideFilter(firstIndexQuery(e).sql, other.nodeName)
          case _ =>
        }
      }
    }
  }

  /** Checks every IndexQuery predicate of `e`, a condition over `child`. */
  private def checkAll(e: Expression, child: LogicalPlan, ctes: Map[Long, LogicalPlan]): Unit =
    e.foreach {
      case iq: IndexQueryExpression => checkColumn(iq, child, ctes)
      case all: IndexQueryAllExpression => checkAll(all, child, ctes)
      case _ =>
    }

  private def checkColumn(
      iq: IndexQueryExpression,
      child: LogicalPlan,
      ctes: Map[Long, LogicalPlan]): Unit = {
    val attr = iq.child match {
      case a: Attribute => a
      case other => throw IndexTablesErrors.indexQueryNeedsColumn(iq.sql, other.sql)
    }
    source(child, attr.exprId, ctes) match {
      case Some((r, name)) if tableOf(r).isDefined =>
        val table = tableOf(r).get
        val schema = table.indexSchema
        if (schema.isPartitionColumn(name))
          throw IndexTablesErrors.indexQueryOnPartitionColumn(iq.sql, name)
        val field =
          schema.field(name).getOrElse(throw IndexTablesErrors.indexQueryNeedsColumn(iq.sql, name))
        iq.mode match {
          case IndexQueryMode.TextSearch if field.kind != IndexKind.Text =>
            throw IndexTablesErrors.indexQueryWrongFieldKind(iq.sql, name, field.kind.name, "text")
          case IndexQueryMode.FieldMatch
              if field.kind == IndexKind.Text || field.kind == IndexKind.Json =>
            throw IndexTablesErrors.indexQueryWrongFieldKind(
              iq.sql,
              name,
              field.kind.name,
              "string or another exact (not tokenized) type")
          case _ =>
        }
      case Some((leaf, _)) =>
        throw IndexTablesErrors.indexQueryNotOnIndexTables(iq.sql, describe(leaf))
      case None => throw IndexTablesErrors.indexQueryNeedsColumn(iq.sql, attr.sql)
    }
  }

  private def checkAll(
      all: IndexQueryAllExpression,
      child: LogicalPlan,
      ctes: Map[Long, LogicalPlan]): Unit = {
    val leaves = relations(child, ctes)
    leaves match {
      case Seq(r) if tableOf(r).isDefined =>
      case Seq(other) =>
        throw IndexTablesErrors.indexQueryNotOnIndexTables(all.sql, describe(other))
      case _ => throw IndexTablesErrors.indexQueryAllAmbiguous(all.sql, leaves.map(describe))
    }
  }

  private def pushDown(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case Filter(cond, r: DataSourceV2Relation)
        if indexTable(r).isDefined && containsIndexQuery(cond) =>
      val (mixed, rest) = splitConjunctivePredicates(cond).partition(containsIndexQuery)
      val tagged = SparkLineShim.withOptions(r, tag(r.options, mixed, r.output))
      if (rest.isEmpty) tagged else Filter(rest.reduceLeft(And), tagged)
  }

  /**
   * A stream's read of an IndexTables table gets its IndexQuery tree during analysis: Spark
   * builds a stream's scan when the query starts, from the analyzed plan (the optimizer then
   * sees only the stream's batches), so the tree must be in the relation's options by then. The
   * filter may reach the relation through nodes that keep its rows and column ids
   * ([[pathToStream]]); each micro-batch's new splits are then searched with the tree. The
   * options also mark the read as a stream's ([[IndexQueryRegistry.StreamOption]]), so that no
   * route answers it on the driver when Spark 4.2 negotiates it as a batch read.
   */
  private def intoStreams(plan: LogicalPlan): LogicalPlan = {
    // A batch query's plan has no stream to tag: left as it is, without a transform.
    if (!plan.exists(_.isInstanceOf[StreamingRelationV2])) return plan
    lazy val ctes = ctesOf(plan)
    AnalysisHelper.allowInvokingTransformsInAnalyzer {
      plan.transformUp {
        case f @ Filter(cond, child) if f.resolved && containsIndexQuery(cond) =>
          pathToStream(child) match {
            case Right(s) =>
              val (mixed, rest) = splitConjunctivePredicates(cond).partition(containsIndexQuery)
              val options = tag(s.extraOptions, mixed, s.output, IndexQueryRegistry.StreamOption)
              val tagged = SparkLineShim.withStreamOptions(s, options)
              // The path holds one stream, `s`: the node replaced is that very one.
              val under = child.transformDown { case r: StreamingRelationV2 if r eq s => tagged }
              if (rest.isEmpty) under else Filter(rest.reduceLeft(And), under)
            case Left(through) if searchesStream(cond, child, ctes) =>
              throw IndexTablesErrors.indexQueryOnStream(firstIndexQuery(cond).sql, through)
            case Left(_) => f
          }
      }
    }
  }

  /** Whether an IndexQuery predicate of `cond`, a condition over `child`, reads a stream. */
  private def searchesStream(
      cond: Expression,
      child: LogicalPlan,
      ctes: Map[Long, LogicalPlan]): Boolean =
    cond.collect {
      case IndexQueryExpression(a: Attribute, _, _) => source(child, a.exprId, ctes).map(_._1).toSeq
      case _: IndexQueryAllExpression => relations(child, ctes)
    }.flatten.exists(_.isInstanceOf[StreamingRelationV2])

  /**
   * The stream of an IndexTables table that `plan` reads through aliases, views, deterministic
   * filters without an IndexQuery, and projections of plain columns (none renames or computes
   * one, so a column's id is the stream's); else the first other node's name.
   */
  private def pathToStream(plan: LogicalPlan): Either[String, StreamingRelationV2] = plan match {
    case s: StreamingRelationV2 if tableOf(s).isDefined => Right(s)
    case a: SubqueryAlias => pathToStream(a.child)
    case v: View => pathToStream(v.child)
    case f: Filter if f.condition.deterministic && !containsIndexQuery(f.condition) =>
      pathToStream(f.child)
    case p: Project if p.projectList.forall(_.isInstanceOf[Attribute]) => pathToStream(p.child)
    case other => Left(other.nodeName)
  }

  /**
   * `options` with the key of the IndexQuery tree of `mixed` (conjuncts over `output`) and of
   * any tree the options carried already (a filter planned before), stored in the registry.
   */
  private def tag(
      options: CaseInsensitiveStringMap,
      mixed: Seq[Expression],
      output: Seq[Attribute],
      marks: String*): CaseInsensitiveStringMap = {
    val names = output.map(a => a.exprId -> a.name).toMap
    val tree = mixed.map(toMixed(_, names)).reduceLeft[MixedBooleanFilter](_ and _)
    val previous = Option(options.get(IndexQueryRegistry.KeyOption))
      .flatMap(IndexQueryRegistry.lookup)
    val combined = previous.map(_ and tree).getOrElse(tree)
    val key = IndexQueryRegistry.newKey()
    IndexQueryRegistry.store(key, combined)
    new CaseInsensitiveStringMap(
      (options.asCaseSensitiveMap().asScala.toMap ++ marks.map(_ -> "true") +
        (IndexQueryRegistry.KeyOption -> key)).asJava)
  }

  private def toMixed(e: Expression, names: Map[ExprId, String]): MixedBooleanFilter = e match {
    case And(l, r) => MixedBooleanFilter.And(toMixed(l, names), toMixed(r, names))
    case Or(l, r) => MixedBooleanFilter.Or(toMixed(l, names), toMixed(r, names))
    case Not(c) => MixedBooleanFilter.Not(toMixed(c, names))
    case iq @ IndexQueryExpression(a: Attribute, query, mode) =>
      MixedBooleanFilter.IndexQueryFilter(
        names.getOrElse(
          a.exprId,
          throw IndexTablesErrors.indexQueryNeedsColumn(iq.sql, a.sql)),
        query,
        mode)
    case IndexQueryAllExpression(query) => MixedBooleanFilter.IndexQueryAllFilter(query)
    case other if !containsIndexQuery(other) =>
      SparkFilterBridge.translateFilter(other)
        .map(MixedBooleanFilter.Regular)
        .getOrElse(throw IndexTablesErrors.indexQueryWithUntranslatable(other.sql))
    case other => throw IndexTablesErrors.indexQueryInUnsupportedExpression(other.sql)
  }
}

object V2IndexQueryExpressionRule {
  sealed trait Phase
  case object Resolution extends Phase
  case object Optimization extends Phase

  def containsIndexQuery(e: Expression): Boolean = e.exists {
    case _: IndexQueryExpression | _: IndexQueryAllExpression => true
    case _ => false
  }

  private def firstIndexQuery(e: Expression): Expression =
    e.find {
      case _: IndexQueryExpression | _: IndexQueryAllExpression => true; case _ => false
    }.get

  /** The IndexTables table a leaf reads: a batch read's (see [[indexTable]]) or a stream's. */
  def tableOf(leaf: LogicalPlan): Option[IndexTables4SparkTable] = leaf match {
    case r: DataSourceV2Relation => indexTable(r)
    case s: StreamingRelationV2 => Some(s.table).collect { case t: IndexTables4SparkTable => t }
    case _ => None
  }

  /** The IndexTables table `r` reads: directly, or as the scan of a DELETE's rows. */
  def indexTable(r: DataSourceV2Relation): Option[IndexTables4SparkTable] =
    (r.table +: SparkCatalogBridge.rowLevelOperationTarget(r.table).toSeq).collectFirst {
      case t: IndexTables4SparkTable => t
    }

  /**
   * The leaf that produces attribute `id` below `plan`, with the column's name there: followed
   * through projections (a column renamed by an alias), CTE references and every other node.
   */
  def source(
      plan: LogicalPlan,
      id: ExprId,
      ctes: Map[Long, LogicalPlan]): Option[(LogicalPlan, String)] =
    plan match {
      case p: Project =>
        p.projectList.find(_.exprId == id) match {
          case Some(a: Attribute) => source(p.child, a.exprId, ctes)
          case Some(Alias(a: Attribute, _)) => source(p.child, a.exprId, ctes)
          // A SQL view maps its columns through casts to their own types: no change of value.
          case Some(Alias(c: Cast, _))
              if c.child.isInstanceOf[Attribute] &&
                c.child.dataType == c.dataType =>
            source(p.child, c.child.asInstanceOf[Attribute].exprId, ctes)
          case Some(Alias(c: UpCast, _))
              if c.child.isInstanceOf[Attribute] &&
                c.child.dataType == c.dataType =>
            source(p.child, c.child.asInstanceOf[Attribute].exprId, ctes)
          case Some(_) => None
          case None => None
        }
      case ref: CTERelationRef =>
        val i = ref.output.indexWhere(_.exprId == id)
        ctes.get(ref.cteId).filter(_ => i >= 0).flatMap(d => source(d, d.output(i).exprId, ctes))
      case leaf if leaf.children.isEmpty =>
        leaf.output.find(_.exprId == id).map(a => (leaf, a.name))
      case other =>
        val fromChildren = other.children.view.flatMap(c => source(c, id, ctes)).headOption
        fromChildren
    }

  /** The leaf relations below `plan`, looking through CTE references. */
  def relations(plan: LogicalPlan, ctes: Map[Long, LogicalPlan]): Seq[LogicalPlan] = plan match {
    case ref: CTERelationRef => ctes.get(ref.cteId).map(relations(_, ctes)).getOrElse(Seq(ref))
    case _: CTERelationDef => Nil
    case leaf if leaf.children.isEmpty => Seq(leaf)
    case other => other.children.flatMap(relations(_, ctes))
  }

  private def describe(leaf: LogicalPlan): String = leaf match {
    case r: DataSourceV2Relation => s"table ${r.table.name()}"
    case other => other.simpleString(100)
  }
}
