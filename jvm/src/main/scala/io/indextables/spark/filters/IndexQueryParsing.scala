package io.indextables.spark.filters

import scala.collection.JavaConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.TableIndexSchema
import io.indextables.spark.transaction.Snapshot
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

  /** The tree's query, or None when the table has no splits (nothing to search). */
  def toQuery(
      filter: MixedBooleanFilter,
      schema: TableIndexSchema,
      snapshot: Snapshot): Option[SplitQuery] = {
    // The schema registry saves loading the files of a large table just to find a mapping.
    val registered =
      if (snapshot.filesLoaded) None
      else snapshot.schemaRegistry.toSeq.sortBy(_._1).headOption.map(_._2)
    if (registered.isEmpty && snapshot.allFiles.isEmpty) return None
    val mapping = registered.orElse(snapshot.allFiles.iterator.flatMap(a =>
      snapshot.docMappingFor(a)).toStream.headOption)
      .getOrElse(throw IndexTablesErrors.indexQueryWithoutDocMapping(snapshot.tablePath.toString))
    val fieldNames = mapper.readTree(mapping).elements().asScala.map(_.path("name").asText()).toSet
    val native = Schema.fromDocMappingJson(mapping)
    try {
      val parse =
        (query: String, defaults: Seq[String]) => parseOne(native, fieldNames, query, defaults)
      Some(new MixedBooleanFilterConverter(schema, parse).toQuery(filter))
    } finally native.close()
  }

  private def parseOne(
      native: Schema,
      fields: Set[String],
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
    new SplitParsedQuery(json)
  }

  private def referencedFields(node: JsonNode): Set[String] = {
    val own = Option(node.get("field")).filter(_.isTextual).map(_.asText()).toSet
    val children = if (node.isContainerNode) node.elements().asScala.flatMap(referencedFields).toSet
    else Set.empty[String]
    own ++ children
  }
}
