package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{BooleanType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

/**
 * `STOP INDEXTABLES COMPANION STREAM AT LOCATION '<index>'`: stops the stream (`BUILD
 * INDEXTABLES COMPANION ... WITH STREAMING POLL INTERVAL`) that keeps the index at `location`
 * in sync, after the sync it is running ([[BuildCompanionCommand.stopStream]]). A statement, so
 * that a client with no JVM beside it (Spark Connect) stops a stream as any session does. One
 * row: table_path string, stopped boolean (false: no stream of that index runs in this driver).
 */
final case class StopCompanionStreamCommand(location: String) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("table_path", StringType, nullable = false)(),
    AttributeReference("stopped", BooleanType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] =
    Seq(Row(location, BuildCompanionCommand.stopStream(location)))
}
