package io.indextables.spark.transaction

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.fs.Path

/**
 * What one commit did, as Delta's commitInfo records it: the operation and its parameters (the
 * write mode, a replaceWhere predicate, the partition overwrite mode), and its metrics (rows,
 * bytes and files written; the shuffle bytes an optimized write read). The protocol's version
 * files hold only the actions it defines, and other implementations reject unknown ones, so the
 * record lives beside them, in `_transaction_log/_commit_info/<version>.json`, written just after
 * the version file. A writer that dies in between leaves a version without one; readers then
 * derive the operation from the actions. Immutable.
 */
final case class CommitInfo(
    operation: String,
    parameters: Map[String, String],
    timestamp: Long,
    metrics: Map[String, String] = Map.empty)

object CommitInfo {
  val DirName = "_commit_info"

  private val mapper = new ObjectMapper()

  def path(logPath: Path, version: Long): Path =
    new Path(new Path(logPath, DirName), VersionFiles.fileName(version))

  def encode(info: CommitInfo): Array[Byte] = {
    val node = mapper.createObjectNode()
    node.put("operation", info.operation)
    node.put("timestamp", info.timestamp)
    val params = node.putObject("operationParameters")
    info.parameters.toSeq.sortBy(_._1).foreach { case (k, v) => params.put(k, v) }
    if (info.metrics.nonEmpty) {
      val metrics = node.putObject("operationMetrics")
      info.metrics.toSeq.sortBy(_._1).foreach { case (k, v) => metrics.put(k, v) }
    }
    mapper.writeValueAsString(node).getBytes(StandardCharsets.UTF_8)
  }

  /** The record in `bytes`, or None when it is not one (a damaged record is only a lost label). */
  def decode(bytes: Array[Byte]): Option[CommitInfo] =
    scala.util.Try {
      val node = mapper.readTree(bytes)
      def entries(name: String) = Option(node.get(name)).toSeq
        .flatMap(_.fields().asScala.map(e => e.getKey -> e.getValue.asText()))
        .toMap
      CommitInfo(
        node.get("operation").asText(),
        entries("operationParameters"),
        node.path("timestamp").asLong(0L),
        entries("operationMetrics"))
    }.toOption.filter(_.operation.nonEmpty)
}
