package io.indextables.spark.sql

import java.util.Locale

import org.antlr.v4.runtime.atn.PredictionMode
import org.antlr.v4.runtime.{BaseErrorListener, CharStreams, CommonTokenStream, RecognitionException, Recognizer}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.sql.parser.{IndexTablesSqlBaseLexer, IndexTablesSqlBaseParser}

/**
 * Parses the IndexTables commands with the generated grammar. `isCommand` is the cheap check on
 * normalised text that decides whether a statement is ours at all; a statement it claims must
 * then parse, or fails with an error naming the position. Thread-safe (a parser per call).
 */
object IndexTablesCommandParser {

  private val CommandStart = Seq(
    """(checkpoint|compact|describe|desc|drop|truncate|flush|invalidate|prewarm)\s+(indextables|tantivy4spark)\b""",
    """purge\s+(indextable|indextables|tantivy4spark)\b""",
    """repair\s+indexfiles\b""",
    """build\s+(indextables|tantivy4spark)\s+companion\b""",
    """stop\s+(indextables|tantivy4spark)\s+companion\b""",
    """merge\s+splits\b"""
  ).mkString("^(", "|", ").*").r

  def isCommand(sqlText: String): Boolean = {
    val normalised = sqlText.replaceAll("(?s)/\\*.*?\\*/", " ").replaceAll("--[^\n]*", " ")
      .trim.toLowerCase(Locale.ROOT).replaceAll("\\s+", " ")
    CommandStart.pattern.matcher(normalised).matches()
  }

  def parse(sqlText: String): LogicalPlan = {
    val lexer = new IndexTablesSqlBaseLexer(CharStreams.fromString(sqlText))
    val parser = new IndexTablesSqlBaseParser(new CommonTokenStream(lexer))
    val listener = new BaseErrorListener {
      override def syntaxError(
          r: Recognizer[_, _],
          offending: Any,
          line: Int,
          pos: Int,
          msg: String,
          e: RecognitionException): Unit =
        throw IndexTablesErrors.commandSyntaxError(sqlText, line, pos, msg)
    }
    lexer.removeErrorListeners(); lexer.addErrorListener(listener)
    parser.removeErrorListeners(); parser.addErrorListener(listener)
    parser.getInterpreter.setPredictionMode(PredictionMode.SLL)
    new IndexTablesSqlAstBuilder().visitSingleStatement(parser.singleStatement())
  }
}
