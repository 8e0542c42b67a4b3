package io.indextables.spark.read

import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.connector.read.streaming.Offset

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.transaction.ChangePosition

/**
 * Where a stream of a table's new rows stands, as Spark keeps it in the query's checkpoint:
 * the table's id (its metadata's, which a table re-created at the same path does not keep) and
 * a [[ChangePosition]] (every split up to the one at `index` of `version` was read; the
 * starting version's splits are the table as it stood). Its JSON form is
 * `{"sourceVersion":1,"tableId":...,"version":...,"index":...,"isStartingVersion":...}`,
 * written in that order, so that equal offsets have equal JSON. Immutable.
 */
final case class IndexTablesSourceOffset(tableId: String, position: ChangePosition)
    extends Offset {

  override def json(): String = {
    val node = IndexTablesSourceOffset.mapper.createObjectNode()
    node.put("sourceVersion", IndexTablesSourceOffset.SourceVersion)
    node.put("tableId", tableId)
    node.put("version", position.version)
    node.put("index", position.index)
    node.put("isStartingVersion", position.isStartingVersion)
    IndexTablesSourceOffset.mapper.writeValueAsString(node)
  }
}

object IndexTablesSourceOffset {

  /** The version of the offset's JSON form this code writes and reads. */
  val SourceVersion: Int = 1

  private val mapper = new ObjectMapper()

  /**
   * The offset in `json` (from a checkpoint of a stream of table `tablePath`); fails with
   * `INDEXTABLES_STREAMING_SOURCE_OFFSET`, saying what is wrong, when it is not one.
   */
  def parse(json: String, tablePath: String): IndexTablesSourceOffset = {
    def bad(reason: String) = IndexTablesErrors.streamingSourceOffset(tablePath, json, reason)
    val node = Try(mapper.readTree(json)).toOption.filter(n => n != null && n.isObject)
      .getOrElse(throw bad("it is not a JSON object"))
    def field(name: String) =
      Option(node.get(name)).filterNot(_.isNull).getOrElse(throw bad(s"it has no $name"))
    val format = field("sourceVersion")
    if (!format.canConvertToInt || format.asInt() < 1) throw bad("its sourceVersion is invalid")
    if (format.asInt() > SourceVersion) {
      throw bad(
        s"it was written in format ${format.asInt()} by a newer IndexTables, and this one " +
          s"reads format $SourceVersion")
    }
    val tableId = field("tableId")
    val version = field("version")
    val index = field("index")
    val starting = field("isStartingVersion")
    if (!tableId.isTextual) throw bad("its tableId is not a string")
    if (!version.isIntegralNumber || version.asLong() < 0) {
      throw bad("its version is not a non-negative integer")
    }
    if (!index.isIntegralNumber || index.asLong() < -1) {
      throw bad("its index is not an integer of at least -1")
    }
    if (!starting.isBoolean) throw bad("its isStartingVersion is not true or false")
    IndexTablesSourceOffset(
      tableId.asText(),
      ChangePosition(version.asLong(), index.asLong(), starting.asBoolean()))
  }
}
