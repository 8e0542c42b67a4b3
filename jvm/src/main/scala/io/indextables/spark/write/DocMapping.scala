package io.indextables.spark.write

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode

import io.indextables.spark.schema.{IndexKind, IndexedField}

/**
 * The field mapping of a split written by the Arrow FFI path, which tantivy4java 0.31.0 does not
 * report. It describes what that path builds (every field indexed and stored, fast but for JSON
 * objects; strings with
 * the raw tokenizer; structs as JSON objects of default-tokenized strings), in the form tantivy4java's batch-document path
 * reports, so both kinds of split carry the same kind of record in the log.
 */
object DocMapping {
  private val mapper = new ObjectMapper()

  /**
   * The mapping tantivy4java reports for a batch-document split, made readable by the searcher:
   * it lists `tokenizer`, `record` and `fieldnorms` on a text field that is not indexed (a
   * stored-only column), which Quickwit's doc mapper refuses ("allowed only if indexed is
   * true"), failing every search of the split. They mean nothing there, so they are dropped.
   */
  def readable(json: String): String = {
    val tree = mapper.readTree(json)
    var changed = false
    if (tree != null && tree.isArray) tree.elements().forEachRemaining {
      case o: ObjectNode
          if o.path("type").asText() == "text" && o.has(
            "indexed") && !o.get("indexed").asBoolean() =>
        Seq("tokenizer", "record", "fieldnorms").foreach { k =>
          if (o.has(k)) { o.remove(k); changed = true }
        }
      case _ =>
    }
    if (changed) mapper.writeValueAsString(tree) else json
  }

  def forArrowFfi(fields: Seq[IndexedField]): String = {
    val arr = mapper.createArrayNode()
    fields.sortBy(_.name).foreach { f =>
      val n: ObjectNode = mapper.createObjectNode()
      // Its JSON objects are not fast (a range on a path in one fails "not configured as fast").
      n.put("fast", f.kind != IndexKind.Json).put("indexed", true).put("name", f.name)
        .put("stored", true)
      f.kind match {
        case IndexKind.RawString | IndexKind.Text => n.put("tokenizer", "raw").put("type", "text")
        case IndexKind.Json =>
          // The Arrow FFI path indexes a struct as a JSON object whose strings tantivy cuts with
          // its `default` tokenizer (a nested "Z 17" is the tokens z and 17).
          n.put("expand_dots", false).put("tokenizer", "default").put("type", "object")
          n.putArray("field_mappings")
        case IndexKind.I64 => n.put("type", "i64")
        case IndexKind.F64 => n.put("type", "f64")
        case IndexKind.Bool => n.put("type", "bool")
        case IndexKind.DateTime => n.put("type", "datetime")
        case IndexKind.Bytes => n.put("type", "bytes")
        case IndexKind.Ip => n.put("type", "ip")
      }
      arr.add(n)
    }
    mapper.writeValueAsString(arr)
  }
}
