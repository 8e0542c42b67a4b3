package io.indextables.spark.schema

import java.util.Locale

import org.apache.spark.sql.types._

/**
 * What a write asks of the index, from upstream's `spark.indextables.indexing.*` keys, by column
 * name in lower case (see config.IndexTablesOptions.indexing).
 *
 * @param typemap    column to `string`, `text`, `json` or `ip`
 * @param tokenizers column to tantivy tokenizer name
 * @param sources    for each column, the key that named it, for errors
 */
final case class IndexingRequest(
    typemap: Map[String, String] = Map.empty,
    tokenizers: Map[String, String] = Map.empty,
    fast: Set[String] = Set.empty,
    nonFast: Set[String] = Set.empty,
    storeOnly: Set[String] = Set.empty,
    indexOnly: Set[String] = Set.empty,
    sources: Map[String, String] = Map.empty) {

  def isEmpty: Boolean = this.copy(sources = Map.empty) == IndexingRequest()

  /** Every column the request names, with the key that names it. */
  def columns: Set[String] =
    typemap.keySet ++ tokenizers.keySet ++ fast ++ nonFast ++ storeOnly ++ indexOnly

  def keyFor(column: String): String =
    sources.getOrElse(column, IndexingRequest.TypemapPrefix + column)

  /**
   * This request where `higher` says nothing: `higher`'s entries per column win, and each of its
   * non-empty lists replaces this one's.
   */
  def overlaidBy(higher: IndexingRequest): IndexingRequest = {
    def pick(mine: Set[String], theirs: Set[String]) = if (theirs.nonEmpty) theirs else mine
    IndexingRequest(
      typemap ++ higher.typemap,
      tokenizers ++ higher.tokenizers,
      pick(fast, higher.fast),
      pick(nonFast, higher.nonFast),
      pick(storeOnly, higher.storeOnly),
      pick(indexOnly, higher.indexOnly),
      sources ++ higher.sources
    )
  }

  /** Only what applies to `schema`: entries of columns it has (index types: string columns). */
  def restrictedTo(schema: StructType): IndexingRequest = {
    val all = schema.fields.map(_.name.toLowerCase(Locale.ROOT)).toSet
    val strings =
      schema.fields.collect {
        case f if f.dataType == StringType => f.name.toLowerCase(Locale.ROOT)
      }
        .toSet
    IndexingRequest(
      typemap.filter(e => strings.contains(e._1)),
      tokenizers.filter(e => strings.contains(e._1)),
      fast.intersect(all),
      nonFast.intersect(all),
      storeOnly.intersect(all),
      indexOnly.intersect(all),
      sources
    )
  }
}

object IndexingRequest {

  /** The prefix of every key of how a table indexes its columns. */
  val IndexingPrefix: String = "spark.indextables.indexing."
  val TypemapPrefix: String = "spark.indextables.indexing.typemap."
  val TokenizerPrefix: String = "spark.indextables.indexing.tokenizer."
  val FastFieldsKey: String = "spark.indextables.indexing.fastfields"
  val NonFastFieldsKey: String = "spark.indextables.indexing.nonfastfields"
  val StoreOnlyFieldsKey: String = "spark.indextables.indexing.storeonlyfields"
  val IndexOnlyFieldsKey: String = "spark.indextables.indexing.indexonlyfields"

  val IndexTypes: Seq[String] = Seq("string", "text", "json", "ip")

  /** The tokenizers tantivy registers in every index. */
  val Tokenizers: Seq[String] = Seq("default", "raw", "whitespace", "en_stem")
}
