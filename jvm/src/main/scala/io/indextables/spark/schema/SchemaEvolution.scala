package io.indextables.spark.schema

import java.util.Locale

import org.apache.spark.sql.types.{StructField, StructType}

import io.indextables.spark.IndexTablesErrors

/**
 * What an append may do to a table's schema, as Delta Lake's `mergeSchema` allows: add nullable
 * columns, only when asked. A column whose type differs, or a table column the data lacks, fails
 * naming the column (and both types); new columns without `mergeSchema` fail naming them.
 * Columns compare by name ignoring case, as Spark resolves them. Pure.
 */
object SchemaEvolution {

  /**
   * The table's schema after appending `data`: the table's columns, then the data's new ones
   * (nullable, since older splits hold none of them).
   */
  def merge(
      table: String,
      tableSchema: StructType,
      data: StructType,
      mergeSchema: Boolean): StructType = {
    def key(f: StructField) = f.name.toLowerCase(Locale.ROOT)
    val dataByName = data.fields.map(f => key(f) -> f).toMap
    val tableNames = tableSchema.fields.map(key).toSet
    tableSchema.fields.foreach { t =>
      dataByName.get(key(t)) match {
        case None => throw IndexTablesErrors.columnMissingFromData(table, t.name, tableSchema)
        case Some(d) if d.dataType != t.dataType =>
          throw IndexTablesErrors.columnTypeChanged(table, t.name, t.dataType, d.dataType)
        case _ =>
      }
    }
    val added = data.fields.filterNot(f => tableNames.contains(key(f)))
    if (added.nonEmpty && !mergeSchema)
      throw IndexTablesErrors.newColumnsWithoutMergeSchema(table, added.map(_.name).toSeq)
    StructType(tableSchema.fields ++ added.map(_.copy(nullable = true)))
  }
}
