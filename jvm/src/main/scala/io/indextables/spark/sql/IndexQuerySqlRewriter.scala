package io.indextables.spark.sql

import java.util.Locale

import scala.collection.mutable.ArrayBuffer

import io.indextables.spark.expressions.IndexQueryFunctions

/**
 * Rewrites the IndexQuery operators in SQL text into function calls Spark's own parser accepts:
 *  - `col indexquery 'q'`  to `tantivy4spark_indexquery(col, 'q')`
 *  - `_indexall indexquery 'q'` and `indexqueryall('q')` to `tantivy4spark_indexqueryall('q')`
 *  - `col textsearch 'q'` / `col fieldmatch 'q'` to `tantivy4spark_textsearch(col, 'q')` /
 *    `tantivy4spark_fieldmatch(col, 'q')`.
 * The text is first split into tokens the way Spark's lexer does (string literals with `\`
 * escapes and doubled quotes, backquoted identifiers, `--` and nested `/* */` comments), so an
 * operator inside a literal, an identifier or a comment is never touched. A run of adjacent literals
 * is one operand (Spark concatenates them, which is also what `'it''s'` is to Spark 3.5: `its`),
 * and literals are copied verbatim, leaving their unescaping to Spark. Keywords match case-insensitively. Pure and
 * thread-safe.
 */
object IndexQuerySqlRewriter {

  import IndexQueryFunctions.{FieldMatchFunction, IndexQueryAllFunction, IndexQueryFunction, TextSearchFunction}

  private val Operators = Map(
    "indexquery" -> IndexQueryFunction,
    "textsearch" -> TextSearchFunction,
    "fieldmatch" -> FieldMatchFunction)

  /** Words that can stand before an operator but are never a column. */
  private val NotAColumn = Set(
    "where",
    "and",
    "or",
    "not",
    "on",
    "having",
    "select",
    "when",
    "then",
    "else",
    "case",
    "by",
    "is",
    "in",
    "like",
    "between",
    "filter",
    "qualify")

  /** The cheap check: could `sql` hold one of our operators at all? */
  def mayContainOperator(sql: String): Boolean = {
    val l = sql.toLowerCase(Locale.ROOT)
    l.contains("indexquery") || l.contains("textsearch") || l.contains("fieldmatch")
  }

  private sealed trait Kind
  private case object Word extends Kind
  private case object Quoted extends Kind // backquoted identifier
  private case object Str extends Kind
  private case object Comment extends Kind
  private case object Space extends Kind
  private case object Punct extends Kind

  private final case class Token(kind: Kind, start: Int, end: Int, text: String) {
    def lower: String = text.toLowerCase(Locale.ROOT)
    def isBlank: Boolean = kind == Space || kind == Comment
  }

  /** `sql` with every operator form rewritten; unchanged when it holds none. */
  def rewrite(sql: String): String = {
    if (!mayContainOperator(sql)) return sql
    val tokens = tokenize(sql)
    val out = new StringBuilder
    var copied = 0 // position in sql up to which text has been emitted
    var i = 0
    while (i < tokens.length) {
      val t = tokens(i)
      if (t.kind == Word && Operators.contains(t.lower)) {
        val colEnd = prevSolid(tokens, i - 1)
        val colStart = if (colEnd >= 0) columnStart(tokens, colEnd) else -1
        val strStart = nextSolid(tokens, i + 1)
        val strEnd = stringRun(tokens, strStart)
        if (colStart >= 0 && strEnd >= 0 && tokens(colStart).start >= copied) {
          val column = sql.substring(tokens(colStart).start, tokens(colEnd).end)
          val literal = sql.substring(tokens(strStart).start, tokens(strEnd).end)
          val isAll = colStart == colEnd && tokens(colEnd).kind == Word &&
            tokens(colEnd).lower == "_indexall"
          val call =
            if (isAll && t.lower == "indexquery") s"$IndexQueryAllFunction($literal)"
            else s"${Operators(t.lower)}($column, $literal)"
          out.append(sql.substring(copied, tokens(colStart).start)).append(call)
          copied = tokens(strEnd).end
          i = strEnd + 1
        } else i += 1
      } else if (t.kind == Word && t.lower == "indexqueryall") {
        val next = nextSolid(tokens, i + 1)
        val prev = prevSolid(tokens, i - 1)
        val qualified = prev >= 0 && tokens(prev).text == "."
        if (next >= 0 && tokens(next).text == "(" && !qualified) {
          out.append(sql.substring(copied, t.start)).append(IndexQueryAllFunction)
          copied = t.end
        }
        i += 1
      } else i += 1
    }
    out.append(sql.substring(copied)).toString
  }

  private def prevSolid(tokens: IndexedSeq[Token], from: Int): Int = {
    var j = from
    while (j >= 0 && tokens(j).isBlank) j -= 1
    j
  }

  private def nextSolid(tokens: IndexedSeq[Token], from: Int): Int = {
    var j = from
    while (j < tokens.length && tokens(j).isBlank) j += 1
    if (j < tokens.length) j else -1
  }

  private def isIdentifier(t: Token): Boolean =
    t.kind == Quoted || (t.kind == Word && !NotAColumn.contains(t.lower) && !t.text.head.isDigit)

  /** The first token of a (possibly dotted) column reference ending at `end`, or -1. */
  private def columnStart(tokens: IndexedSeq[Token], end: Int): Int = {
    if (!isIdentifier(tokens(end))) return -1
    var start = end
    var continue = true
    while (continue) {
      val dot = start - 1
      if (dot >= 1 && tokens(dot).text == "." && isIdentifier(tokens(dot - 1))) start = dot - 1
      else continue = false
    }
    start
  }

  /** The last token of a run of adjacent string literals starting at `start`, or -1. */
  private def stringRun(tokens: IndexedSeq[Token], start: Int): Int = {
    if (start < 0 || tokens(start).kind != Str) return -1
    var end = start
    var next = nextSolid(tokens, end + 1)
    while (next >= 0 && tokens(next).kind == Str) { end = next; next = nextSolid(tokens, end + 1) }
    end
  }

  private def tokenize(sql: String): IndexedSeq[Token] = {
    val tokens = ArrayBuffer.empty[Token]
    val n = sql.length
    var i = 0
    def add(kind: Kind, start: Int, end: Int): Unit =
      tokens += Token(kind, start, end, sql.substring(start, end))
    while (i < n) {
      val c = sql.charAt(i)
      val start = i
      if (c == '\'' || c == '"') {
        i += 1
        var closed = false
        while (i < n && !closed) {
          val d = sql.charAt(i)
          if (d == '\\') i += 2
          else if (d == c) {
            i += 1; closed = true
          } else i += 1
        }
        // An unterminated literal is no operand: Spark reports it.
        add(if (closed) Str else Punct, start, math.min(i, n))
      } else if (c == '`') {
        i += 1
        var closed = false
        while (i < n && !closed) {
          if (sql.charAt(i) == '`') {
            if (i + 1 < n && sql.charAt(i + 1) == '`') i += 2 else { i += 1; closed = true }
          } else i += 1
        }
        add(Quoted, start, math.min(i, n))
      } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        while (i < n && sql.charAt(i) != '\n') i += 1
        add(Comment, start, i)
      } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        var depth = 1
        i += 2
        while (i < n && depth > 0) {
          if (sql.startsWith("/*", i)) { depth += 1; i += 2 }
          else if (sql.startsWith("*/", i)) { depth -= 1; i += 2 }
          else i += 1
        }
        add(Comment, start, math.min(i, n))
      } else if (c.isWhitespace) {
        while (i < n && sql.charAt(i).isWhitespace) i += 1
        add(Space, start, i)
      } else if (c.isLetterOrDigit || c == '_') {
        while (i < n && (sql.charAt(i).isLetterOrDigit || sql.charAt(i) == '_')) i += 1
        add(Word, start, i)
      } else {
        i += 1
        add(Punct, start, i)
      }
    }
    tokens.toIndexedSeq
  }
}
