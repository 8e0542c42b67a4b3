package io.indextables.spark.transaction

import java.nio.charset.StandardCharsets.UTF_8

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.indextables.spark.IndexTablesErrors

/**
 * The content of `_transaction_log/_last_checkpoint`, the pointer to the newest checkpoint.
 *
 * `format` is `avro-state` (with `stateDir`), `json` (single file `<version>.checkpoint.json`)
 * or `json-multipart` (with `checkpointId` and `parts`); a pointer without `format` is a JSON
 * checkpoint, multi-part when it has a `checkpointId`. Immutable.
 */
final case class LastCheckpoint(
    version: Long,
    size: Long,
    sizeInBytes: Long,
    numFiles: Long,
    createdTime: Long,
    parts: Option[Int] = None,
    checkpointId: Option[String] = None,
    format: Option[String] = None,
    stateDir: Option[String] = None) {

  def isAvroState: Boolean = format.contains(LastCheckpoint.AvroStateFormat)

  def isMultiPart: Boolean =
    !isAvroState && (format.contains(LastCheckpoint.MultiPartFormat) || checkpointId.isDefined)

  /** The JSON form, with the reference's field order and explicit nulls. */
  def toJson: Array[Byte] = {
    val n = LastCheckpoint.mapper.createObjectNode()
    n.put("version", version)
    n.put("size", size)
    n.put("sizeInBytes", sizeInBytes)
    n.put("numFiles", numFiles)
    n.put("createdTime", createdTime)
    parts.fold(n.putNull("parts"))(p => n.put("parts", p))
    checkpointId.fold(n.putNull("checkpointId"))(c => n.put("checkpointId", c))
    format.fold(n.putNull("format"))(f => n.put("format", f))
    stateDir.fold(n.putNull("stateDir"))(d => n.put("stateDir", d))
    LastCheckpoint.mapper.writeValueAsString(n).getBytes(UTF_8)
  }
}

object LastCheckpoint {
  val AvroStateFormat: String = "avro-state"
  val JsonFormat: String = "json"
  val MultiPartFormat: String = "json-multipart"

  private val mapper = new ObjectMapper()

  /** Parses a pointer; throws `INDEXTABLES_LOG_MALFORMED_CHECKPOINT_POINTER` naming what is wrong. */
  def fromJson(bytes: Array[Byte]): LastCheckpoint = {
    val root = mapper.readTree(bytes)
    if (root == null || !root.isObject)
      throw IndexTablesErrors.malformedCheckpointPointer("not a JSON object")
    def opt(name: String): Option[JsonNode] = Option(root.get(name)).filterNot(_.isNull)
    def long(name: String): Option[Long] = opt(name).filter(_.canConvertToLong).map(_.asLong())
    LastCheckpoint(
      version = long("version").getOrElse(
        throw IndexTablesErrors.malformedCheckpointPointer(
          "field 'version' is missing or not a number")),
      size = long("size").getOrElse(-1L),
      sizeInBytes = long("sizeInBytes").getOrElse(-1L),
      numFiles = long("numFiles").getOrElse(-1L),
      createdTime = long("createdTime").getOrElse(0L),
      parts = long("parts").map(_.toInt),
      checkpointId = opt("checkpointId").map(_.asText()),
      format = opt("format").map(_.asText()),
      stateDir = opt("stateDir").map(_.asText())
    )
  }

  /** `state-v<20 digits>`, the state directory name of a version. */
  def stateDirName(version: Long): String = f"state-v$version%020d"

  private val StateDirPattern = """^state-v(\d{20})$""".r

  def versionOfStateDir(name: String): Option[Long] = name match {
    case StateDirPattern(d) => Some(d.toLong)
    case _ => None
  }

}
