package io.indextables.spark.filters

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.node.{ArrayNode, ObjectNode}
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.{IndexKind, IpAddresses, TableIndexSchema}
import io.indextables.tantivy4java.core.Schema
import io.indextables.tantivy4java.split.{SplitParsedQuery, SplitQuery}

/**
 * Parses the IndexQuery strings of a [[MixedBooleanFilter]] on the driver, with the tantivy
 * schema of the table's splits (their recorded doc mapping), and checks them: a blank query, a
 * syntax error or a field the table does not index fails with an error quoting the query, so a
 * bad query never silently matches everything (or nothing). The native schema is closed here.
 */
object IndexQueryParsing {
  private val mapper = new ObjectMapper()

  /**
   * The tree's query for splits indexed as `schema` says, parsed with `mapping` (their doc
   * mapping, with the fields of the table's other splits after it; splits without one cannot
   * be searched by an IndexQuery, and fail naming `table`). A field these splits do not hold (a
   * column added later) matches no document of theirs, as a field without a value would.
   */
  def toQuery(
      filter: MixedBooleanFilter,
      schema: TableIndexSchema,
      mapping: Option[String],
      table: String): SplitQuery = {
    val m = mapping.getOrElse(throw IndexTablesErrors.indexQueryWithoutDocMapping(table))
    val fieldNames = mapper.readTree(m).elements().asScala.map(_.path("name").asText()).toSet
    val native = Schema.fromDocMappingJson(m)
    try {
      val ipFields = schema.fields.filter(_.kind == IndexKind.Ip).map(_.name).toSet
      val parse = (query: String, defaults: Seq[String]) =>
        parseOne(
          native,
          fieldNames,
          schema.absent ++ schema.unmappedJson,
          withCidrRanges(query, defaults, ipFields),
          defaults)
      new MixedBooleanFilterConverter(schema, parse).toQuery(filter)
    } finally native.close()
  }

  private val Cidr =
    """(?<![\w.:])(?:([A-Za-z_][\w]*):)?([0-9A-Fa-f:.]+/\d{1,3})(?![\w.:/])""".r

  /**
   * `query` with each CIDR block on an `ip` field (`ip:10.0.0.0/24`, or a bare block when the
   * default field is one) written as the range of its addresses, which tantivy's parser takes.
   */
  private def withCidrRanges(query: String, defaults: Seq[String], ipFields: Set[String]): String =
    if (ipFields.isEmpty || !query.contains("/")) query
    else Cidr.replaceAllIn(
      query,
      m => {
        val field = Option(m.group(1)).orElse(defaults.find(ipFields.contains).filter(_ =>
          defaults.size == 1))
        val range = IpAddresses.cidrRange(m.group(2))
        (field, range) match {
          case (Some(f), Some((lo, hi))) if ipFields.contains(f) =>
            scala.util.matching.Regex.quoteReplacement(s"$f:[$lo TO $hi]")
          case _ => scala.util.matching.Regex.quoteReplacement(m.matched)
        }
      }
    )

  private def parseOne(
      native: Schema,
      fields: Set[String],
      absent: Set[String],
      query: String,
      defaults: Seq[String]): SplitQuery = {
    if (query.trim.isEmpty) throw IndexTablesErrors.invalidIndexQuery(query, "the query is empty")
    val json =
      try SplitQuery.parseQuery(query, native, defaults.toArray).toQueryAstJson
      catch { case e: Exception => throw IndexTablesErrors.invalidIndexQuery(query, e.getMessage) }
    val unknown = referencedFields(mapper.readTree(json)).filterNot { f =>
      fields.contains(f) || fields.exists(n => f.startsWith(n + "."))
    }
    if (unknown.nonEmpty) {
      throw IndexTablesErrors.invalidIndexQuery(
        query,
        s"the table indexes no field ${unknown.toSeq.sorted.mkString(", ")} " +
          s"(fields: ${fields.toSeq.sorted.mkString(", ")})")
    }
    if (absent.isEmpty) new SplitParsedQuery(json)
    else
      new SplitParsedQuery(mapper.writeValueAsString(withoutFields(mapper.readTree(json), absent)))
  }

  /** `node` with every clause on one of `fields` (or a path under one) matching nothing. */
  private def withoutFields(node: JsonNode, fields: Set[String]): JsonNode = {
    val own = Option(node.get("field")).filter(_.isTextual).map(_.asText())
    if (own.exists(f => fields.exists(a => f == a || f.startsWith(a + "."))))
      mapper.createObjectNode().put("type", "match_none")
    else node match {
      case o: ObjectNode =>
        val out = mapper.createObjectNode()
        o.fields().asScala.foreach(e =>
          out.set[JsonNode](e.getKey, withoutFields(e.getValue, fields)))
        out
      case a: ArrayNode =>
        val out = mapper.createArrayNode()
        a.elements().asScala.foreach(e => out.add(withoutFields(e, fields)))
        out
      case other => other
    }
  }

  private def referencedFields(node: JsonNode): Set[String] = {
    val own = Option(node.get("field")).filter(_.isTextual).map(_.asText()).toSet
    val children = if (node.isContainerNode) node.elements().asScala.flatMap(referencedFields).toSet
    else Set.empty[String]
    own ++ children
  }
}
