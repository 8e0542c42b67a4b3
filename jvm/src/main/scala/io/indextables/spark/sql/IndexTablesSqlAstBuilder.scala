package io.indextables.spark.sql

import scala.jdk.CollectionConverters._

import org.antlr.v4.runtime.ParserRuleContext
import org.antlr.v4.runtime.misc.Interval
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import io.indextables.spark.IndexTablesErrors

import io.indextables.spark.sql.commands._
import io.indextables.spark.sql.parser.IndexTablesSqlBaseBaseVisitor
import io.indextables.spark.sql.parser.IndexTablesSqlBaseParser._

/** Builds a command plan from a parse tree of the IndexTables grammar. Stateless. */
class IndexTablesSqlAstBuilder extends IndexTablesSqlBaseBaseVisitor[AnyRef] {

  override def visitSingleStatement(ctx: SingleStatementContext): LogicalPlan =
    visit(ctx.statement()).asInstanceOf[LogicalPlan]

  override def visitCheckpoint(ctx: CheckpointContext): LogicalPlan =
    CheckpointIndexTablesCommand(target(ctx.target()))

  override def visitMergeSplits(ctx: MergeSplitsContext): LogicalPlan = {
    val where = Option(ctx.whereClause).map(textOf).filter(_.nonEmpty)
    if (ctx.WHERE() != null && where.isEmpty) {
      throw IndexTablesErrors.invalidMergeWhere(
        ctx.target().getText,
        "",
        "the WHERE clause is empty; give a predicate on partition columns")
    }
    MergeSplitsCommand(
      target(ctx.target()),
      where,
      Option(ctx.targetSize).map(value),
      Option(ctx.maxDestSplits).map(value),
      Option(ctx.maxSourceSplitsPerMerge).map(value))
  }

  override def visitDescribeMergeJobs(ctx: DescribeMergeJobsContext): LogicalPlan =
    DescribeMergeJobsCommand

  override def visitDescribeState(ctx: DescribeStateContext): LogicalPlan =
    DescribeIndexTablesStateCommand(target(ctx.target()))

  override def visitDescribeTransactionLog(ctx: DescribeTransactionLogContext): LogicalPlan =
    DescribeIndexTablesTransactionLogCommand(target(ctx.target()), includeAll = ctx.ALL() != null)

  override def visitDescribeDiskCache(ctx: DescribeDiskCacheContext): LogicalPlan =
    DescribeIndexTablesDiskCacheCommand

  override def visitDescribeStorageStats(ctx: DescribeStorageStatsContext): LogicalPlan =
    DescribeIndexTablesStorageStatsCommand

  override def visitDescribeEnvironment(ctx: DescribeEnvironmentContext): LogicalPlan =
    DescribeIndexTablesEnvironmentCommand

  override def visitDescribeComponentSizes(ctx: DescribeComponentSizesContext): LogicalPlan =
    DescribeIndexTablesComponentSizesCommand(
      target(ctx.target()),
      Option(ctx.where).map(textOf).filter(_.nonEmpty))

  override def visitFlushSearcherCache(ctx: FlushSearcherCacheContext): LogicalPlan =
    FlushIndexTablesSearcherCacheCommand

  override def visitFlushDiskCache(ctx: FlushDiskCacheContext): LogicalPlan =
    FlushIndexTablesDiskCacheCommand

  override def visitInvalidateTransactionLogCache(
      ctx: InvalidateTransactionLogCacheContext): LogicalPlan =
    InvalidateIndexTablesTransactionLogCacheCommand(Option(ctx.target()).map(target))

  override def visitPrewarmCache(ctx: PrewarmCacheContext): LogicalPlan =
    PrewarmIndexTablesCacheCommand(
      target(ctx.target()),
      Option(ctx.segments).map(identifiers).getOrElse(Nil),
      Option(ctx.fields).map(identifiers).getOrElse(Nil),
      Option(ctx.parallelism).map(t => BigInt(t.getText)),
      Option(ctx.where).map(textOf).filter(_.nonEmpty)
    )

  private def identifiers(ctx: IdentifierListContext): Seq[String] =
    ctx.identifier().asScala.map(identifier).toSeq

  override def visitDescribeHistory(ctx: DescribeHistoryContext): LogicalPlan =
    DescribeIndexTablesHistoryCommand(target(ctx.target()))

  override def visitPurgeIndexTable(ctx: PurgeIndexTableContext): LogicalPlan =
    PurgeIndexTableCommand(
      target(ctx.target()),
      Option(ctx.olderThan).map(n => hours(n.getText, ctx.olderUnit)),
      Option(ctx.logRetention).map(n => hours(n.getText, ctx.logUnit)),
      dryRun = ctx.DRY() != null
    )

  override def visitDropPartitions(ctx: DropPartitionsContext): LogicalPlan =
    DropPartitionsCommand(target(ctx.target()), Option(ctx.predicate()).map(text))

  override def visitTruncateTimeTravel(ctx: TruncateTimeTravelContext): LogicalPlan =
    TruncateTimeTravelCommand(target(ctx.target()), dryRun = ctx.DRY() != null)

  override def visitRepairIndexFiles(ctx: RepairIndexFilesContext): LogicalPlan =
    RepairIndexFilesCommand(
      IndexTablesSqlAstBuilder.unquote(ctx.source.getText),
      IndexTablesSqlAstBuilder.unquote(ctx.destination.getText))

  override def visitStopCompanionStream(ctx: StopCompanionStreamContext): LogicalPlan =
    StopCompanionStreamCommand(IndexTablesSqlAstBuilder.unquote(ctx.location.getText))

  override def visitBuildCompanion(ctx: BuildCompanionContext): LogicalPlan = {
    val clauses = ctx.buildClause().asScala.toSeq
    clauses.collectFirst { case u: UnknownBuildClauseContext => u }.foreach { u =>
      throw IndexTablesErrors.companionUnknownOption(textOf(u))
    }
    def one[T](name: String, found: Seq[T]): Option[T] = found match {
      case Seq() => None
      case Seq(c) => Some(c)
      case _ => throw IndexTablesErrors.companionInvalidOption(name, "", "give it once")
    }
    def unquoted(w: ModeWordContext) =
      if (w.STRING() != null) IndexTablesSqlAstBuilder.unquote(w.getText)
      else identifier(w.identifier())
    BuildCompanionCommand(
      identifier(ctx.format),
      IndexTablesSqlAstBuilder.unquote(ctx.source.getText),
      IndexTablesSqlAstBuilder.unquote(ctx.location.getText),
      BuildCompanionOptions(
        includeColumns = one(
          "INCLUDE COLUMNS",
          clauses.collect { case c: IncludeColumnsClauseContext =>
            identifiers(c.identifierList())
          }),
        excludeColumns = one(
          "EXCLUDE COLUMNS",
          clauses.collect { case c: ExcludeColumnsClauseContext =>
            identifiers(c.identifierList())
          }),
        indexingModes = one(
          "INDEXING MODES",
          clauses.collect { case c: IndexingModesClauseContext =>
            c.indexingMode().asScala.map(m => unquoted(m.column) -> unquoted(m.kind)).toSeq
          }),
        fastFieldsMode = one(
          "FASTFIELDS MODE",
          clauses.collect { case c: FastFieldsModeClauseContext => value(c.fieldsMode) }),
        targetInputSize = one(
          "TARGET INPUT SIZE",
          clauses.collect { case c: TargetInputSizeClauseContext => value(c.size) }),
        writerHeapSize = one(
          "WRITER HEAP SIZE",
          clauses.collect { case c: WriterHeapSizeClauseContext => value(c.size) }),
        where = one(
          "WHERE",
          clauses.collect { case c: BuildWhereClauseContext => textOf(c.buildPredicate()) }),
        fromVersion = one(
          "FROM VERSION",
          clauses.collect { case c: FromVersionClauseContext => c.version.getText }),
        fromSnapshot = one(
          "FROM SNAPSHOT",
          clauses.collect { case c: FromSnapshotClauseContext => c.snapshotId.getText }),
        catalog = one(
          "CATALOG",
          clauses.collect { case c: CatalogClauseContext =>
            IndexTablesSqlAstBuilder.unquote(c.catalogName.getText)
          }),
        warehouse = one(
          "WAREHOUSE",
          clauses.collect { case c: WarehouseClauseContext =>
            IndexTablesSqlAstBuilder.unquote(c.warehouse.getText)
          }),
        streamingPollInterval = one(
          "WITH STREAMING POLL INTERVAL",
          clauses.collect { case c: StreamingClauseContext =>
            c.interval.getText -> c.unit.getText.toUpperCase(java.util.Locale.ROOT)
          })
      ),
      dryRun = ctx.DRY() != null
    )
  }

  /** `n DAYS | HOURS` in hours. */
  private def hours(n: String, unit: TimeUnitContext): Long = {
    val value = BigInt(n)
    val h = if (unit.DAYS() != null) value * 24 else value
    if (!h.isValidLong) {
      val at = unit.getStart
      throw IndexTablesErrors.commandSyntaxError(
        at.getInputStream.toString,
        at.getLine,
        at.getCharPositionInLine,
        s"$n ${unit.getText} is too long")
    }
    h.toLong
  }

  /** The text of `ctx` as written, whitespace and comments included. */
  private def text(ctx: ParserRuleContext): String =
    ctx.start.getInputStream.getText(Interval.of(ctx.start.getStartIndex, ctx.stop.getStopIndex))

  private def target(ctx: TargetContext): IndexTablesCommandTarget = ctx match {
    case p: PathTargetContext =>
      IndexTablesCommandTarget.TablePath(IndexTablesSqlAstBuilder.unquote(p.path.getText))
    case t: TableTargetContext =>
      IndexTablesCommandTarget.TableName(
        t.qualifiedName().identifier().asScala.map(identifier).toSeq)
  }

  /** The original text of a rule's tokens, as written (spaces and comments included). */
  private def textOf(ctx: ParserRuleContext): String =
    if (ctx.start == null || ctx.stop == null || ctx.stop.getTokenIndex < ctx.start.getTokenIndex)
      ""
    else
      ctx.start.getInputStream.getText(
        Interval.of(ctx.start.getStartIndex, ctx.stop.getStopIndex)).trim

  private def value(ctx: AlphanumericValueContext): String =
    if (ctx.STRING() != null) IndexTablesSqlAstBuilder.unquote(ctx.getText) else ctx.getText

  private def identifier(ctx: IdentifierContext): String = {
    val text = ctx.getText
    if (ctx.BACKQUOTED_IDENTIFIER() != null) text.substring(1, text.length - 1).replace("``", "`")
    else text
  }
}

object IndexTablesSqlAstBuilder {

  /** A string literal's value: quotes removed, backslash escapes resolved as Spark does. */
  def unquote(literal: String): String = {
    val body = literal.substring(1, literal.length - 1)
    val sb = new StringBuilder
    var i = 0
    while (i < body.length) {
      val c = body.charAt(i)
      if (c == '\\' && i + 1 < body.length) {
        body.charAt(i + 1) match {
          case 'n' => sb.append('\n'); case 't' => sb.append('\t'); case 'r' => sb.append('\r')
          case '0' => sb.append('\u0000'); case other => sb.append(other)
        }
        i += 2
      } else { sb.append(c); i += 1 }
    }
    sb.toString
  }
}
