package io.indextables.spark.schema

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.util.BoundedCache

/**
 * How one split holds the table's columns, read from the split's own doc mapping (the `add`
 * action's `docMappingJson`, or the registry entry its `docMappingRef` names), as the protocol
 * intends: a table written elsewhere (IndexTables 0.5.4 records no typemap in its metadata), or
 * appended to with new columns or other indexing options, has splits that differ, and each is
 * searched as it was written. A string field tokenized `raw` is a `string` column; any other
 * tokenizer makes it `text`; objects are `json`; `ip` is an address; the flags say what is
 * indexed, stored and fast. A data column missing from the mapping is absent from the split,
 * except a JSON one: tantivy4java leaves out of the mapping a JSON field whose objects in the
 * split have no keys at all (`{}`), so such a column is `unmapped`: read, never searched.
 * Memoized per (table schema, mapping): a large table has a handful of distinct mappings.
 */
object SplitIndexSchema {
  private val mapper = new ObjectMapper()
  private val memo =
    new BoundedCache[(StructType, Seq[String], String, Set[String]), TableIndexSchema](1024)

  /**
   * @param jsonStrings the string columns the table holds as JSON (its recorded typemap); struct,
   *                    array and map columns always are
   */
  def of(
      schema: StructType,
      partitionColumns: Seq[String],
      docMapping: String,
      jsonStrings: Set[String] = Set.empty): TableIndexSchema =
    memo.getOrElseUpdate((schema, partitionColumns, docMapping, jsonStrings)) {
      val tree =
        try mapper.readTree(docMapping)
        catch {
          case e: Exception =>
            throw IndexTablesErrors.invalidDocMapping(s"it is not JSON (${e.getMessage})")
        }
      if (tree == null || !tree.isArray)
        throw IndexTablesErrors.invalidDocMapping("it is not a JSON array of fields")
      val byName = tree.elements().asScala.map(n => n.path("name").asText() -> n).toMap
      val data = schema.fields.toSeq.filterNot(f => partitionColumns.contains(f.name))
      val fields = data.flatMap(f => byName.get(f.name).map(n => fieldOf(f.name, f.dataType, n)))
      val (unmapped, absent) = data.filterNot(f => byName.contains(f.name)).partition { f =>
        f.dataType match {
          case StringType => jsonStrings.contains(f.name.toLowerCase(java.util.Locale.ROOT))
          case _: StructType | _: ArrayType | _: MapType => true
          case _ => false
        }
      }
      val unmappedFields = unmapped.map { f =>
        IndexedField(f.name, f.dataType, IndexKind.Json, indexed = false, fast = false)
      }
      TableIndexSchema(schema, partitionColumns, fields ++ unmappedFields, absent.map(_.name).toSet)
    }

  private def fieldOf(column: String, dt: DataType, n: JsonNode): IndexedField = {
    val tpe = n.path("type").asText()
    val tokenizer = Option(n.get("tokenizer")).map(_.asText())
    def flag(name: String, default: Boolean) =
      Option(n.get(name)).filter(_.isBoolean).map(_.asBoolean()).getOrElse(default)
    val kind: IndexKind = (tpe, dt) match {
      case ("text", StringType) if tokenizer.forall(_ == "raw") => IndexKind.RawString
      case ("text", StringType) => IndexKind.Text
      case ("object" | "json", StringType | _: StructType | _: ArrayType | _: MapType) =>
        IndexKind.Json
      case ("ip", StringType) => IndexKind.Ip
      case ("i64" | "u64", t) if IntegerTypes.contains(t) => IndexKind.I64
      case ("f64", DoubleType | FloatType | _: DecimalType) => IndexKind.F64
      case ("bool", BooleanType) => IndexKind.Bool
      case ("datetime", DateType | TimestampType) => IndexKind.DateTime
      case ("bytes", BinaryType) => IndexKind.Bytes
      case _ => throw IndexTablesErrors.invalidDocMapping(
          s"field '$column' has type '$tpe', which cannot hold the table's ${dt.simpleString}")
    }
    IndexedField(
      column,
      dt,
      kind,
      // tantivy's JSON objects and text fields cut strings with `default` unless told otherwise.
      tokenizer =
        if (kind == IndexKind.Text || kind == IndexKind.Json) tokenizer.orElse(Some("default"))
        else None,
      indexed = flag("indexed", default = true),
      stored = flag("stored", default = true),
      fast = flag("fast", default = false)
    )
  }
}
