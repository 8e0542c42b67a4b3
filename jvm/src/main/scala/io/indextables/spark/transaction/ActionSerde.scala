package io.indextables.spark.transaction

import java.io.StringWriter

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.core.{JsonFactory, JsonGenerator}
import com.fasterxml.jackson.databind.node.JsonNodeType
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.indextables.spark.IndexTablesErrors

/**
 * The JSON form of every [[Action]]: one line `{"<key>":{...}}` per action, with the field names
 * of `protocol.md` (keys `protocol`, `metaData`, `add`, `remove`, `mergeskip`).
 *
 * Writing follows the reference implementation: fields in protocol order and `null` for every
 * absent optional field. Reading ignores unknown fields, treats a missing or `null` optional
 * field as `None`, and fails with a malformed-action error (`INDEXTABLES_LOG_MALFORMED_ACTION`) that names the action and
 * field when a required field is missing, or names the key when the action type is unknown.
 * Stateless and thread-safe.
 */
object ActionSerde {

  private val mapper = new ObjectMapper()
  private val factory: JsonFactory = mapper.getFactory

  /** Serialises one action to a single line of JSON (no trailing newline). */
  def toJson(action: Action): String = {
    val out = new StringWriter()
    val g = factory.createGenerator(out)
    try {
      g.writeStartObject()
      action match {
        case p: ProtocolAction => g.writeFieldName("protocol"); writeProtocol(g, p)
        case m: MetadataAction => g.writeFieldName("metaData"); writeMetadata(g, m)
        case a: AddAction => g.writeFieldName("add"); writeAdd(g, a)
        case r: RemoveAction => g.writeFieldName("remove"); writeRemove(g, r)
        case s: MergeSkipAction => g.writeFieldName("mergeskip"); writeMergeSkip(g, s)
      }
      g.writeEndObject()
    } finally g.close()
    out.toString
  }

  /** Parses one line written by [[toJson]] (or by the reference implementation). */
  def fromJson(line: String): Action = {
    val root =
      try mapper.readTree(line)
      catch {
        case NonFatal(e) =>
          throw IndexTablesErrors.malformedAction(s"Malformed action JSON: ${e.getMessage}", e)
      }
    if (root == null || !root.isObject || root.size() != 1) {
      throw IndexTablesErrors.malformedAction(
        s"An action must be a JSON object with exactly one key, got: ${abbreviate(line)}")
    }
    val key = root.fieldNames().next()
    val body = root.get(key)
    if (!body.isObject) {
      throw IndexTablesErrors.malformedAction(s"Action '$key' must hold a JSON object")
    }
    val r = new FieldReader(key, body)
    key match {
      case "protocol" => readProtocol(r)
      case "metaData" => readMetadata(r)
      case "add" => readAdd(r)
      case "remove" => readRemove(r)
      case "mergeskip" => readMergeSkip(r)
      case other =>
        throw IndexTablesErrors.malformedAction(
          s"Unknown action type '$other' (known: protocol, metaData, add, remove, mergeskip)")
    }
  }

  // ---- writing ------------------------------------------------------------------------------

  private def writeProtocol(g: JsonGenerator, p: ProtocolAction): Unit = {
    g.writeStartObject()
    g.writeNumberField("minReaderVersion", p.minReaderVersion)
    g.writeNumberField("minWriterVersion", p.minWriterVersion)
    writeStringSet(g, "readerFeatures", p.readerFeatures)
    writeStringSet(g, "writerFeatures", p.writerFeatures)
    g.writeEndObject()
  }

  private def writeMetadata(g: JsonGenerator, m: MetadataAction): Unit = {
    g.writeStartObject()
    g.writeStringField("id", m.id)
    writeOptString(g, "name", m.name)
    writeOptString(g, "description", m.description)
    g.writeObjectFieldStart("format")
    g.writeStringField("provider", m.format.provider)
    writeStringMap(g, "options", Some(m.format.options))
    g.writeEndObject()
    g.writeStringField("schemaString", m.schemaString)
    g.writeArrayFieldStart("partitionColumns")
    m.partitionColumns.foreach(g.writeString)
    g.writeEndArray()
    writeStringMap(g, "configuration", Some(m.configuration))
    writeOptLong(g, "createdTime", m.createdTime)
    g.writeEndObject()
  }

  private def writeAdd(g: JsonGenerator, a: AddAction): Unit = {
    g.writeStartObject()
    g.writeStringField("path", a.path)
    writeStringMap(g, "partitionValues", Some(a.partitionValues))
    g.writeNumberField("size", a.size)
    g.writeNumberField("modificationTime", a.modificationTime)
    g.writeBooleanField("dataChange", a.dataChange)
    writeOptString(g, "stats", a.stats)
    writeStringMap(g, "minValues", a.minValues)
    writeStringMap(g, "maxValues", a.maxValues)
    writeOptLong(g, "numRecords", a.numRecords)
    g.writeBooleanField("hasFooterOffsets", a.hasFooterOffsets)
    writeOptLong(g, "footerStartOffset", a.footerStartOffset)
    writeOptLong(g, "footerEndOffset", a.footerEndOffset)
    writeStringSet(g, "splitTags", a.splitTags)
    writeOptLong(g, "numMergeOps", a.numMergeOps.map(_.toLong))
    writeOptString(g, "docMappingRef", a.docMappingRef)
    writeOptString(g, "docMappingJson", a.docMappingJson)
    writeOptLong(g, "uncompressedSizeBytes", a.uncompressedSizeBytes)
    a.companionSourceFiles.foreach { files =>
      g.writeArrayFieldStart("companionSourceFiles")
      files.foreach(g.writeString)
      g.writeEndArray()
    }
    writeOptLong(g, "companionDeltaVersion", a.companionDeltaVersion)
    writeOptString(g, "companionFastFieldMode", a.companionFastFieldMode)
    a.companionSourceFileSizes.foreach { sizes =>
      g.writeArrayFieldStart("companionSourceFileSizes")
      sizes.foreach(s => g.writeNumber(s))
      g.writeEndArray()
    }
    a.companionDocsInRowOrder.foreach(g.writeBooleanField("companionDocsInRowOrder", _))
    a.companionSourceDeletionVectors.foreach { ids =>
      g.writeArrayFieldStart("companionSourceDeletionVectors")
      ids.foreach(g.writeString)
      g.writeEndArray()
    }
    a.deletionVector.foreach(writeDeletionVector(g, _))
    g.writeEndObject()
  }

  /** Delta's form of a deletion vector descriptor, under the key `deletionVector`. */
  private def writeDeletionVector(g: JsonGenerator, d: DeletionVectorDescriptor): Unit = {
    g.writeObjectFieldStart("deletionVector")
    g.writeStringField("storageType", d.storageType)
    g.writeStringField("pathOrInlineDv", d.pathOrInlineDv)
    d.offset.foreach(o => g.writeNumberField("offset", o))
    g.writeNumberField("sizeInBytes", d.sizeInBytes)
    g.writeNumberField("cardinality", d.cardinality)
    g.writeEndObject()
  }

  private def writeRemove(g: JsonGenerator, r: RemoveAction): Unit = {
    g.writeStartObject()
    g.writeStringField("path", r.path)
    writeOptLong(g, "deletionTimestamp", r.deletionTimestamp)
    g.writeBooleanField("dataChange", r.dataChange)
    writeStringMap(g, "partitionValues", r.partitionValues)
    writeOptLong(g, "size", r.size)
    r.deletionVector.foreach(writeDeletionVector(g, _))
    g.writeEndObject()
  }

  private def writeMergeSkip(g: JsonGenerator, s: MergeSkipAction): Unit = {
    g.writeStartObject()
    g.writeStringField("path", s.path)
    g.writeNumberField("skipTimestamp", s.skipTimestamp)
    g.writeStringField("reason", s.reason)
    g.writeStringField("operation", s.operation)
    writeOptLong(g, "retryAfter", s.retryAfter)
    g.writeNumberField("skipCount", s.skipCount)
    g.writeEndObject()
  }

  private def writeOptString(g: JsonGenerator, name: String, v: Option[String]): Unit =
    v match {
      case Some(s) => g.writeStringField(name, s)
      case None => g.writeNullField(name)
    }

  private def writeOptLong(g: JsonGenerator, name: String, v: Option[Long]): Unit =
    v match {
      case Some(n) => g.writeNumberField(name, n)
      case None => g.writeNullField(name)
    }

  /** Sets are written sorted, so that equal actions always produce equal bytes. */
  private def writeStringSet(g: JsonGenerator, name: String, v: Option[Set[String]]): Unit =
    v match {
      case Some(set) =>
        g.writeArrayFieldStart(name)
        set.toSeq.sorted.foreach(g.writeString)
        g.writeEndArray()
      case None => g.writeNullField(name)
    }

  /** Map entries are written sorted by key; a `null` value is written as JSON null. */
  private def writeStringMap(
      g: JsonGenerator,
      name: String,
      v: Option[Map[String, String]]): Unit =
    v match {
      case Some(map) =>
        g.writeObjectFieldStart(name)
        map.toSeq.sortBy(_._1).foreach { case (k, value) =>
          if (value == null) g.writeNullField(k) else g.writeStringField(k, value)
        }
        g.writeEndObject()
      case None => g.writeNullField(name)
    }

  // ---- reading ------------------------------------------------------------------------------

  private def readProtocol(r: FieldReader): ProtocolAction =
    ProtocolAction(
      minReaderVersion = r.requiredInt("minReaderVersion"),
      minWriterVersion = r.requiredInt("minWriterVersion"),
      readerFeatures = r.optStringSet("readerFeatures"),
      writerFeatures = r.optStringSet("writerFeatures")
    )

  private def readMetadata(r: FieldReader): MetadataAction = {
    val format = r.optObject("format") match {
      case Some(f) =>
        val fr = new FieldReader("metaData.format", f)
        FileFormat(
          provider = fr.optString("provider").getOrElse(FileFormat().provider),
          options = fr.optStringMap("options").getOrElse(Map.empty))
      case None => FileFormat()
    }
    MetadataAction(
      id = r.requiredString("id"),
      name = r.optString("name"),
      description = r.optString("description"),
      format = format,
      schemaString = r.requiredString("schemaString"),
      partitionColumns = r.optStringSeq("partitionColumns").getOrElse(Seq.empty),
      configuration = r.optStringMap("configuration").getOrElse(Map.empty),
      createdTime = r.optLong("createdTime")
    )
  }

  private def readAdd(r: FieldReader): AddAction =
    AddAction(
      path = r.requiredString("path"),
      partitionValues = r.optStringMap("partitionValues").getOrElse(Map.empty),
      size = r.requiredLong("size"),
      modificationTime = r.requiredLong("modificationTime"),
      dataChange = r.requiredBoolean("dataChange"),
      stats = r.optString("stats"),
      minValues = r.optStringMap("minValues"),
      maxValues = r.optStringMap("maxValues"),
      numRecords = r.optLong("numRecords"),
      hasFooterOffsets = r.optBoolean("hasFooterOffsets").getOrElse(false),
      footerStartOffset = r.optLong("footerStartOffset"),
      footerEndOffset = r.optLong("footerEndOffset"),
      splitTags = r.optStringSet("splitTags"),
      numMergeOps = r.optInt("numMergeOps"),
      docMappingRef = r.optString("docMappingRef"),
      docMappingJson = r.optString("docMappingJson"),
      uncompressedSizeBytes = r.optLong("uncompressedSizeBytes"),
      companionSourceFiles = r.optStringSeq("companionSourceFiles"),
      companionDeltaVersion = r.optLong("companionDeltaVersion"),
      companionFastFieldMode = r.optString("companionFastFieldMode"),
      companionSourceFileSizes = r.optLongSeq("companionSourceFileSizes"),
      deletionVector = readDeletionVector(r),
      companionDocsInRowOrder = r.optBoolean("companionDocsInRowOrder"),
      companionSourceDeletionVectors = r.optStringSeq("companionSourceDeletionVectors")
    )

  private def readRemove(r: FieldReader): RemoveAction =
    RemoveAction(
      path = r.requiredString("path"),
      deletionTimestamp = r.optLong("deletionTimestamp"),
      dataChange = r.requiredBoolean("dataChange"),
      partitionValues = r.optStringMap("partitionValues"),
      size = r.optLong("size"),
      deletionVector = readDeletionVector(r)
    )

  private def readDeletionVector(r: FieldReader): Option[DeletionVectorDescriptor] =
    r.optObject("deletionVector").map { n =>
      val d = r.nested("deletionVector", n)
      DeletionVectorDescriptor(
        storageType = d.requiredString("storageType"),
        pathOrInlineDv = d.requiredString("pathOrInlineDv"),
        offset = d.optInt("offset"),
        sizeInBytes = d.requiredInt("sizeInBytes"),
        cardinality = d.requiredLong("cardinality")
      )
    }

  private def readMergeSkip(r: FieldReader): MergeSkipAction =
    MergeSkipAction(
      path = r.requiredString("path"),
      skipTimestamp = r.requiredLong("skipTimestamp"),
      reason = r.requiredString("reason"),
      operation = r.requiredString("operation"),
      retryAfter = r.optLong("retryAfter"),
      skipCount = r.requiredInt("skipCount")
    )

  private def abbreviate(s: String): String = if (s.length <= 200) s else s.take(200) + "..."

  /** Typed access to the fields of one action object; errors name the action and the field. */
  private final class FieldReader(action: String, node: JsonNode) {

    private def present(name: String): Option[JsonNode] =
      Option(node.get(name)).filterNot(_.isNull)

    private def fail(name: String, expected: String): Nothing =
      throw IndexTablesErrors.malformedAction(
        s"Action '$action': field '$name' must be $expected, got: ${node.get(name)}")

    private def required(name: String): JsonNode =
      present(name).getOrElse(
        throw IndexTablesErrors.malformedAction(s"Action '$action' lacks required field '$name'"))

    private def asLong(name: String, n: JsonNode): Long =
      if (n.isIntegralNumber && n.canConvertToLong) n.asLong() else fail(name, "an integer")

    private def asInt(name: String, n: JsonNode): Int =
      if (n.isIntegralNumber && n.canConvertToInt) n.asInt() else fail(name, "a 32-bit integer")

    private def asString(name: String, n: JsonNode): String =
      if (n.isTextual) n.asText() else fail(name, "a string")

    private def asBoolean(name: String, n: JsonNode): Boolean =
      if (n.isBoolean) n.asBoolean() else fail(name, "a boolean")

    def requiredString(name: String): String = asString(name, required(name))
    def requiredLong(name: String): Long = asLong(name, required(name))
    def requiredInt(name: String): Int = asInt(name, required(name))
    def requiredBoolean(name: String): Boolean = asBoolean(name, required(name))

    def optString(name: String): Option[String] = present(name).map(asString(name, _))
    def optLong(name: String): Option[Long] = present(name).map(asLong(name, _))
    def optInt(name: String): Option[Int] = present(name).map(asInt(name, _))
    def optBoolean(name: String): Option[Boolean] = present(name).map(asBoolean(name, _))

    /** A reader of the object `n` held in field `name`; its errors name both. */
    def nested(name: String, n: JsonNode): FieldReader = new FieldReader(s"$action.$name", n)

    def optObject(name: String): Option[JsonNode] =
      present(name).map(n => if (n.isObject) n else fail(name, "an object"))

    def optStringSeq(name: String): Option[Seq[String]] =
      present(name).map { n =>
        if (!n.isArray) fail(name, "an array of strings")
        n.elements().asScala.map(e => asString(name, e)).toVector
      }

    def optStringSet(name: String): Option[Set[String]] = optStringSeq(name).map(_.toSet)

    def optLongSeq(name: String): Option[Seq[Long]] =
      present(name).map { n =>
        if (!n.isArray) fail(name, "an array of numbers")
        n.elements().asScala.map(e => asLong(name, e)).toVector
      }

    /** Scalar values are kept as their text; a JSON null value is kept as `null`. */
    def optStringMap(name: String): Option[Map[String, String]] =
      optObject(name).map { obj =>
        obj.fields().asScala.map { e =>
          val v = e.getValue
          val text = v.getNodeType match {
            case JsonNodeType.NULL => null
            case JsonNodeType.STRING => v.asText()
            case JsonNodeType.NUMBER | JsonNodeType.BOOLEAN => v.asText()
            case _ => fail(s"$name.${e.getKey}", "a string or null")
          }
          e.getKey -> text
        }.toMap
      }
  }
}
