package io.indextables.spark.schema

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ArrayNode
import org.apache.spark.sql.types.{DataType, StructType}

import io.indextables.spark.transaction.{AddAction, Snapshot, TableFeatures}

/**
 * How a table's columns are indexed, taken from its splits' own doc mappings (the protocol's
 * record of each split's fields), and only for a table whose splits record none from the typemap
 * in its metadata. Each split is searched as [[forSplit]] says; the table as a whole (what an
 * append must keep) is the union of its live splits' distinct mappings. The schema registry
 * alone would not do: it keeps the mappings of splits an overwrite removed.
 */
object TableIndexing {
  private val mapper = new ObjectMapper()

  def tableSchema(snapshot: Snapshot): StructType =
    snapshot.derived("TableIndexing.tableSchema") {
      DataType.fromJson(snapshot.metadata.schemaString).asInstanceOf[StructType]
    }

  /** How `add` holds the table's columns. */
  def forSplit(snapshot: Snapshot, add: AddAction): TableIndexSchema = {
    val held = snapshot.docMappingFor(add) match {
      case Some(mapping) => SplitIndexSchema.of(
          tableSchema(snapshot),
          snapshot.metadata.partitionColumns,
          mapping,
          jsonStrings(snapshot))
      case None => recorded(snapshot)
    }
    if (add.companionSourceFiles.isDefined) held.servedFromParquet else held
  }

  /** The string columns the table's metadata records as JSON (see SplitIndexSchema.of). */
  private def jsonStrings(snapshot: Snapshot): Set[String] =
    snapshot.derived("TableIndexing.jsonStrings") {
      IndexingRequest.recorded(snapshot.metadata.configuration).typemap.collect {
        case (c, "json") => c
      }.toSet
    }

  /** The table's indexing: every column as the splits that hold it hold it. */
  def ofTable(snapshot: Snapshot): TableIndexSchema =
    snapshot.derived("TableIndexing.ofTable")(tableIndexing(snapshot))

  private def tableIndexing(snapshot: Snapshot): TableIndexSchema = {
    val held = unionMapping(snapshot) match {
      case Some(m) => SplitIndexSchema.of(
          tableSchema(snapshot),
          snapshot.metadata.partitionColumns,
          m,
          jsonStrings(snapshot))
      case None => recorded(snapshot)
    }
    if (TableFeatures.isCompanion(snapshot.protocol)) held.servedFromParquet else held
  }

  /**
   * One doc mapping holding every field of the live splits' distinct mappings (the newest
   * split's, for a field they share), or None for a table without any.
   */
  def unionMapping(snapshot: Snapshot): Option[String] =
    union(snapshot.allFiles.sortBy(a => -a.modificationTime).flatMap(snapshot.docMappingFor))

  /** One doc mapping with every field of `mappings`, the first holding a field giving it. */
  def union(mappings: Seq[String]): Option[String] = {
    if (mappings.isEmpty) None
    else {
      val seen = scala.collection.mutable.LinkedHashMap.empty[String, JsonNode]
      mappings.distinct.foreach { m =>
        val tree = mapper.readTree(m)
        if (tree != null && tree.isArray) tree.elements().asScala.foreach { n =>
          val name = n.path("name").asText()
          if (!seen.contains(name)) seen(name) = n
        }
      }
      val out: ArrayNode = mapper.createArrayNode()
      seen.values.foreach(out.add)
      Some(mapper.writeValueAsString(out))
    }
  }

  /** The typemap the table's metadata records: tables whose splits carry no doc mapping. */
  private def recorded(snapshot: Snapshot): TableIndexSchema =
    TableIndexSchema.resolve(
      tableSchema(snapshot),
      snapshot.metadata.partitionColumns,
      IndexingRequest.recorded(snapshot.metadata.configuration))
}
