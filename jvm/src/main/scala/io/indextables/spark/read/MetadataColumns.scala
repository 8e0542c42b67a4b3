package io.indextables.spark.read

import org.apache.spark.sql.connector.catalog.MetadataColumn
import org.apache.spark.sql.types.{DataType, FloatType, LongType, StringType, StructType}

/**
 * The hidden columns a read can return beside the table's own, named in a query as any column
 * (`SELECT _split, _doc FROM t`), as Iceberg's `_file` and `_pos`: where each row lives. A
 * DELETE, UPDATE or MERGE finds the rows it changes by them. A table with a data column of the
 * same name hides the metadata column (Spark's rule), and a row-level command then refuses it.
 *
 * `_score` is the row's relevance to the query's text clauses (its IndexQuery tree), as
 * Elasticsearch's: tantivy's BM25 with the table's statistics ([[Ranking]]); NULL where no text
 * clause matched the row (a row matched by other filters alone, or a read with no IndexQuery).
 */
object MetadataColumns {

  /** The path of the row's split, relative to the table root, as its add action names it. */
  val Split = "_split"

  /** The row's doc id in its split's one segment. */
  val Doc = "_doc"

  /** The row's BM25 score for the query's text clauses; NULL when none matched it. */
  val Score = "_score"

  private final case class Column(name: String, dataType: DataType) extends MetadataColumn {
    override def isNullable: Boolean = name == Score
    override def comment(): String = name match {
      case Split => "the split file holding the row, relative to the table root"
      case Doc => "the row's document number in its split"
      case _ => "the row's BM25 relevance to the query's text clauses (NULL when none matched)"
    }
  }

  val All: Array[MetadataColumn] =
    Array(Column(Split, StringType), Column(Doc, LongType), Column(Score, FloatType))

  private val Names = All.map(_.name).toSet

  /** The metadata columns `schema`, what a scan reads, asks for (not data columns so named). */
  def in(schema: StructType, dataColumns: StructType): Set[String] =
    schema.fieldNames.filter(n => Names.contains(n) && !dataColumns.fieldNames.contains(n)).toSet

  /** The row-id columns (`_split`, `_doc`) among `columns`: what row-level operations read. */
  def rowIds(columns: Set[String]): Set[String] = columns - Score
}
