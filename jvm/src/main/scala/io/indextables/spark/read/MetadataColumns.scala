package io.indextables.spark.read

import org.apache.spark.sql.connector.catalog.MetadataColumn
import org.apache.spark.sql.types.{DataType, LongType, StringType, StructType}

/**
 * The hidden columns a read can return beside the table's own, named in a query as any column
 * (`SELECT _split, _doc FROM t`), as Iceberg's `_file` and `_pos`: where each row lives. A
 * DELETE, UPDATE or MERGE finds the rows it changes by them. A table with a data column of the
 * same name hides the metadata column (Spark's rule), and a row-level command then refuses it.
 */
object MetadataColumns {

  /** The path of the row's split, relative to the table root, as its add action names it. */
  val Split = "_split"

  /** The row's doc id in its split's one segment. */
  val Doc = "_doc"

  private final case class Column(name: String, dataType: DataType) extends MetadataColumn {
    override def isNullable: Boolean = false
    override def comment(): String = name match {
      case Split => "the split file holding the row, relative to the table root"
      case _ => "the row's document number in its split"
    }
  }

  val All: Array[MetadataColumn] = Array(Column(Split, StringType), Column(Doc, LongType))

  /** The metadata columns `schema`, what a scan reads, asks for (not data columns so named). */
  def in(schema: StructType, dataColumns: StructType): Set[String] =
    schema.fieldNames.filter(n => (n == Split || n == Doc) && !dataColumns.fieldNames.contains(n))
      .toSet
}
