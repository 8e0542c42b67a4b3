package io.indextables.spark.write

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode

import io.indextables.spark.schema.{IndexKind, IndexedField}

/**
 * The field mapping of a split written by the Arrow FFI path, which tantivy4java 0.31.0 does not
 * report. It describes what that path builds (every field indexed, stored and fast; strings with
 * the raw tokenizer; structs as JSON objects), in the form tantivy4java's batch-document path
 * reports, so both kinds of split carry the same kind of record in the log.
 */
object DocMapping {
  private val mapper = new ObjectMapper()

  def forArrowFfi(fields: Seq[IndexedField]): String = {
    val arr = mapper.createArrayNode()
    fields.sortBy(_.name).foreach { f =>
      val n: ObjectNode = mapper.createObjectNode()
      n.put("fast", true).put("indexed", true).put("name", f.name).put("stored", true)
      f.kind match {
        case IndexKind.RawString | IndexKind.Text => n.put("tokenizer", "raw").put("type", "text")
        case IndexKind.Json =>
          n.put("expand_dots", false).put("tokenizer", "raw").put("type", "object")
          n.putArray("field_mappings")
        case IndexKind.I64 => n.put("type", "i64")
        case IndexKind.F64 => n.put("type", "f64")
        case IndexKind.Bool => n.put("type", "bool")
        case IndexKind.DateTime => n.put("type", "datetime")
        case IndexKind.Bytes => n.put("type", "bytes")
      }
      arr.add(n)
    }
    mapper.writeValueAsString(arr)
  }
}
