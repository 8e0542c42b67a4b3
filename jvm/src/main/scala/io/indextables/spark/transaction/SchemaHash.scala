package io.indextables.spark.transaction

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.util.Base64

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.node.{ArrayNode, JsonNodeFactory, ObjectNode}
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.indextables.spark.IndexTablesErrors

/**
 * The schema-deduplication hash of `protocol.md` ("Hash Computation"): the doc mapping JSON is
 * brought to a canonical form (object keys sorted; arrays whose elements are all objects with a
 * `name` field sorted by that name, stably; applied recursively), printed compactly, hashed with
 * SHA-256, Base64-encoded (standard alphabet) and cut to 16 characters. Two JSON texts that
 * differ only in key order or in the order of named fields get the same hash.
 * Stateless and thread-safe.
 */
object SchemaHash {

  val HashLength: Int = 16

  /** Prefix of schema registry entries in [[MetadataAction.configuration]]. */
  val RegistryKeyPrefix: String = "docMappingSchema."

  private val mapper = new ObjectMapper()

  def compute(json: String): String = {
    val digest = MessageDigest.getInstance("SHA-256").digest(canonicalize(json).getBytes(UTF_8))
    Base64.getEncoder.encodeToString(digest).take(HashLength)
  }

  /** The configuration key under which the schema with this hash is stored. */
  def registryKey(hash: String): String = RegistryKeyPrefix + hash

  /** Doc mapping JSON by hash, from a metadata configuration's registry entries. */
  def registry(configuration: Map[String, String]): Map[String, String] =
    configuration.collect {
      case (k, v) if k.startsWith(RegistryKeyPrefix) && v != null =>
        k.stripPrefix(RegistryKeyPrefix) -> v
    }

  /** The canonical, compact JSON text that [[compute]] hashes. */
  def canonicalize(json: String): String = {
    val tree =
      try mapper.readTree(json)
      catch {
        case e: com.fasterxml.jackson.core.JsonProcessingException =>
          throw IndexTablesErrors.invalidDocMapping(
            s"it is not valid JSON: ${e.getOriginalMessage}",
            e)
      }
    mapper.writeValueAsString(canonical(tree))
  }

  private def canonical(node: JsonNode): JsonNode = node match {
    case obj: ObjectNode =>
      val out = JsonNodeFactory.instance.objectNode()
      obj.fieldNames().asScala.toVector.sorted.foreach { k =>
        out.set[JsonNode](k, canonical(obj.get(k)))
      }
      out
    case arr: ArrayNode =>
      val elements = arr.elements().asScala.map(canonical).toVector
      val named = elements.nonEmpty && elements.forall(e => e.isObject && e.has("name"))
      val ordered = if (named) elements.sortBy(nameOf) else elements
      val out = JsonNodeFactory.instance.arrayNode()
      ordered.foreach(e => out.add(e))
      out
    case other => other
  }

  private def nameOf(node: JsonNode): String = {
    val n = node.get("name")
    if (n.isTextual) n.asText() else n.toString
  }
}
