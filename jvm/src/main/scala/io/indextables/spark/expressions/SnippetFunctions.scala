package io.indextables.spark.expressions

import java.util.Locale

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, ExpressionInfo, Literal, UnaryExpression}
import org.apache.spark.sql.types.{ByteType, DataType, IntegerType, LongType, ShortType, StringType}
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.rank.NativeRanker
import io.indextables.tantivy4java.core.{Schema, SchemaBuilder}
import io.indextables.tantivy4java.split.SplitQuery

/** How a highlight is rendered: its tags, its length and whether the text is escaped. */
final case class SnippetOptions(
    preTag: String = SnippetOptions.DefaultPreTag,
    postTag: String = SnippetOptions.DefaultPostTag,
    maxChars: Int = SnippetOptions.DefaultMaxChars,
    encoder: String = SnippetOptions.DefaultEncoder) {
  def escapeHtml: Boolean = encoder == "html"
}

object SnippetOptions {
  val DefaultPreTag = "<b>"
  val DefaultPostTag = "</b>"
  val DefaultMaxChars = 150
  val DefaultEncoder = "default"
  val Encoders: Seq[String] = Seq("default", "html")
}

/**
 * A query prepared for one column: the field its value is matched as (the column's name in its
 * IndexTables table, the query's default field), the tokenizer that cuts it, and the query's
 * Quickwit AST, which the native highlighter evaluates against each value.
 */
final case class SnippetQuery(field: String, tokenizer: String, astJson: String)

object SnippetQuery {

  private val mapper = new ObjectMapper()

  /**
   * `query` parsed against `schema` (whose fields are `fieldNames`) with `field` as its default
   * field. A blank or malformed query, or one naming a field the schema lacks, fails with
   * INDEXTABLES_INVALID_INDEXQUERY, quoting it, as an IndexQuery does. Closes `schema`.
   */
  def parse(
      query: String,
      field: String,
      tokenizer: String,
      schema: Schema,
      fieldNames: Set[String]): SnippetQuery =
    try {
      if (query.trim.isEmpty) throw IndexTablesErrors.invalidIndexQuery(query, "the query is empty")
      val ast =
        try SplitQuery.parseQuery(query, schema, Array(field)).toQueryAstJson
        catch {
          case e: Exception => throw IndexTablesErrors.invalidIndexQuery(query, e.getMessage)
        }
      val unknown = referencedFields(mapper.readTree(ast)).filterNot { f =>
        fieldNames.contains(f) || fieldNames.exists(n => f.startsWith(n + "."))
      }
      if (unknown.nonEmpty)
        throw IndexTablesErrors.invalidIndexQuery(
          query,
          s"there is no field ${unknown.toSeq.sorted.mkString(", ")} to search (fields: " +
            s"${fieldNames.toSeq.sorted.mkString(", ")})")
      SnippetQuery(field, tokenizer, ast)
    } finally schema.close()

  private def referencedFields(node: JsonNode): Set[String] = {
    val own = Option(node.get("field")).filter(_.isTextual).map(_.asText()).toSet
    val children =
      if (node.isContainerNode) node.elements().asScala.flatMap(referencedFields).toSet
      else Set.empty[String]
    own ++ children
  }

  /** `query` for a value that is not an IndexTables column: one text field, `tokenizer`. */
  def parseStandalone(query: String, field: String, tokenizer: String): SnippetQuery = {
    val b = new SchemaBuilder()
    val schema =
      try b.addTextField(field, true, false, tokenizer, "position").build()
      finally b.close()
    parse(query, field, tokenizer, schema, Set(field))
  }
}

/**
 * `indextables_snippet(child, 'query', ...)`: the best fragment of the string `child` with what
 * the query matched in it marked, or NULL when nothing of it matched (docs/highlights.md).
 * Evaluated row by row by the native highlighter; the query is parsed once, on the driver, by
 * the catalyst rule that resolves the column's tokenizer from its IndexTables table (`prepared`),
 * or, where that rule did not reach it, once per task with the `default` tokenizer.
 */
final case class IndexTablesSnippet(
    child: Expression,
    query: String,
    options: SnippetOptions,
    prepared: Option[SnippetQuery] = None)
    extends UnaryExpression with CodegenFallback {

  override def dataType: DataType = StringType

  override def nullable: Boolean = true

  override def prettyName: String = SnippetFunctions.Name

  /** The field a value is matched as when no IndexTables column names it. */
  def defaultField: String = child match {
    case a: Attribute => a.name
    case _ => SnippetFunctions.ValueField
  }

  @transient private lazy val plan: SnippetQuery = prepared.getOrElse(
    SnippetQuery.parseStandalone(query, defaultField, "default"))

  override protected def nullSafeEval(input: Any): Any = {
    val text = input.asInstanceOf[UTF8String].toString
    val q = plan
    val out =
      try NativeRanker.snippet(
          q.tokenizer,
          q.field,
          q.astJson,
          text,
          options.maxChars,
          options.preTag,
          options.postTag,
          options.escapeHtml)
      catch {
        case e: RuntimeException =>
          throw IndexTablesErrors.internalError(
            s"Highlighting with the query '$query' failed: ${e.getMessage}")
      }
    out.map(UTF8String.fromString).orNull
  }

  override def sql: String = {
    val extra =
      if (options == SnippetOptions()) Nil
      else Seq(
        Literal(options.preTag).sql,
        Literal(options.postTag).sql,
        options.maxChars.toString,
        Literal(options.encoder).sql)
    (Seq(child.sql, Literal(query).sql) ++ extra).mkString(s"$prettyName(", ", ", ")")
  }

  override def toString: String = sql

  override protected def withNewChildInternal(newChild: Expression): IndexTablesSnippet =
    copy(child = newChild)
}

/**
 * The registration of `indextables_snippet(column, 'query'[, 'pre_tag', 'post_tag'[,
 * max_chars[, 'encoder']]])` for `SparkSessionExtensions.injectFunction`. Every argument but
 * the column must be a literal; bad ones fail analysis (INDEXTABLES_SNIPPET_ARGUMENTS), as does
 * a column that is not a string (INDEXTABLES_SNIPPET_NOT_STRING).
 */
object SnippetFunctions {

  val Name = "indextables_snippet"

  /** The field name a value that is not a column is matched as (`value:term` names it). */
  val ValueField = "value"

  type Builder = Seq[Expression] => Expression

  val function: (FunctionIdentifier, ExpressionInfo, Builder) = (
    FunctionIdentifier(Name),
    new ExpressionInfo(
      classOf[IndexTablesSnippet].getCanonicalName,
      null,
      Name,
      "_FUNC_(column, 'query'[, 'pre_tag', 'post_tag'[, max_chars[, 'encoder']]]) - The best " +
        "fragment (at most max_chars characters, default 150; 0 for the whole value) of the " +
        "string column with what the tantivy query matched in it between pre_tag and post_tag " +
        "(default <b> and </b>), the text escaped for HTML when encoder is 'html'; NULL when " +
        "nothing of it matched.",
      "",
      "",
      "",
      "",
      "",
      "",
      ""
    ),
    build _)

  private def build(args: Seq[Expression]): Expression = {
    if (args.size != 2 && args.size != 4 && args.size != 5 && args.size != 6)
      throw IndexTablesErrors.snippetArguments(
        s"got ${args.size} arguments (pre_tag and post_tag go together)")
    val column = args.head
    if (column.dataType != StringType)
      throw IndexTablesErrors.snippetNotString(column.sql, column.dataType)
    val query = string("the query", args(1))
    val options = SnippetOptions(
      preTag = args.lift(2).map(string("pre_tag", _)).getOrElse(SnippetOptions.DefaultPreTag),
      postTag = args.lift(3).map(string("post_tag", _)).getOrElse(SnippetOptions.DefaultPostTag),
      maxChars = args.lift(4).map(maxChars).getOrElse(SnippetOptions.DefaultMaxChars),
      encoder = args.lift(5).map(encoder).getOrElse(SnippetOptions.DefaultEncoder)
    )
    IndexTablesSnippet(column, query, options)
  }

  private def literal(what: String, e: Expression): Any = {
    if (!e.foldable)
      throw IndexTablesErrors.snippetArguments(s"$what must be a literal, got ${e.sql}")
    e.eval()
  }

  private def string(what: String, e: Expression): String = literal(what, e) match {
    case s: UTF8String if e.dataType == StringType => s.toString
    case _ => throw IndexTablesErrors.snippetArguments(s"$what must be a string, got ${e.sql}")
  }

  private def maxChars(e: Expression): Int = {
    val n = (literal("max_chars", e), e.dataType) match {
      case (v: Number, IntegerType | LongType | ShortType | ByteType) => Some(v.longValue)
      case _ => None
    }
    n.filter(v => v >= 0 && v <= Int.MaxValue).map(_.toInt).getOrElse(
      throw IndexTablesErrors.snippetArguments(
        s"max_chars must be a whole number >= 0 (0: the whole value), got ${e.sql}"))
  }

  private def encoder(e: Expression): String = {
    val name = string("encoder", e).toLowerCase(Locale.ROOT)
    if (!SnippetOptions.Encoders.contains(name))
      throw IndexTablesErrors.snippetArguments(
        s"encoder must be ${SnippetOptions.Encoders.map(n => s"'$n'").mkString(" or ")}, got " +
          e.sql)
    name
  }
}
