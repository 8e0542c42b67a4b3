package io.indextables.spark.schema

import java.util.Locale

import org.apache.spark.sql.types._

import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}

/**
 * What a write asks of the index, from upstream's `spark.indextables.indexing.*` keys, by column
 * name in lower case ([[IndexingRequest.resolve]]).
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

  // The keys' names: defined once, in the registry.
  val IndexingPrefix: String = IndexTablesConf.IndexingPrefix
  val TypemapPrefix: String = IndexTablesConf.IndexingTypemapPrefix
  val TokenizerPrefix: String = IndexTablesConf.IndexingTokenizerPrefix
  val FastFieldsKey: String = IndexTablesConf.IndexingFastFields
  val NonFastFieldsKey: String = IndexTablesConf.IndexingNonFastFields
  val StoreOnlyFieldsKey: String = IndexTablesConf.IndexingStoreOnlyFields
  val IndexOnlyFieldsKey: String = IndexTablesConf.IndexingIndexOnlyFields

  val IndexTypes: Seq[String] = Seq("string", "text", "json", "ip")

  /** The tokenizers tantivy registers in every index. */
  val Tokenizers: Seq[String] = Seq("default", "raw", "whitespace", "en_stem")

  /**
   * What `layers` (highest precedence first; keys compared ignoring case) ask of the index, from
   * upstream's `spark.indextables.indexing.*` keys (a higher layer overrides a column's setting
   * from a lower one):
   *  - `typemap.<column>` = string | text | json | ip (`ipaddr` too), or the list form
   *    `typemap.<type>` = "a,b" (a value that is a type name makes the per-column form);
   *  - `tokenizer.<column>` = default | raw | whitespace | en_stem, or `tokenizer.<name>` = "a,b";
   *  - `fastfields`, `nonfastfields`, `storeonlyfields`, `indexonlyfields`: column lists, each
   *    taken whole from the highest layer that sets it.
   * Column names are lower-cased; [[TableIndexSchema.resolve]] checks them against the data.
   * The one reader of these keys.
   */
  def resolve(layers: Seq[Map[String, String]]): IndexingRequest = {
    val lowered = layers.map(_.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v })
    // A list is one setting: the highest layer that gives it wins.
    def lists(key: String): Set[String] = {
      val k = key.toLowerCase(Locale.ROOT)
      lowered.collectFirst { case m if m.contains(k) => m(k) }.toSeq.flatMap(names).toSet
    }
    def perColumn(prefix: String, values: Seq[String], normalize: String => String) = {
      val p = prefix.toLowerCase(Locale.ROOT)
      // Lowest precedence first, so higher layers overwrite.
      layers.reverse.foldLeft(Map.empty[String, (String, String)]) { (acc, layer) =>
        acc ++ layer.toSeq.flatMap { case (k, raw) =>
          val lower = k.toLowerCase(Locale.ROOT)
          if (!lower.startsWith(p)) Nil
          else {
            val suffix = lower.substring(p.length)
            val value = normalize(raw.trim.toLowerCase(Locale.ROOT))
            val suffixValue = normalize(suffix)
            if (values.contains(suffixValue) && !values.contains(value))
              names(raw).map(c => (c, (suffixValue, k)))
            else Seq((suffix, (value, k)))
          }
        }
      }
    }
    val types = perColumn(TypemapPrefix, IndexTypes, t => if (t == "ipaddr") "ip" else t)
    val tokenizers = perColumn(TokenizerPrefix, Tokenizers, identity)
    IndexingRequest(
      typemap = types.map { case (c, (t, _)) => c -> t },
      tokenizers = tokenizers.map { case (c, (t, _)) => c -> t },
      fast = lists(FastFieldsKey),
      nonFast = lists(NonFastFieldsKey),
      storeOnly = lists(StoreOnlyFieldsKey),
      indexOnly = lists(IndexOnlyFieldsKey),
      sources = (types ++ tokenizers).map { case (c, (_, k)) => c -> k }
    )
  }

  /** What `opts` ask of the index, over its layers (option, session, table property). */
  def resolve(opts: IndexTablesOptions): IndexingRequest =
    resolve(Seq(opts.options, opts.sessionConf, opts.tableProps))

  /** The indexing a table records in its metadata's configuration. */
  def recorded(configuration: Map[String, String]): IndexingRequest = resolve(Seq(configuration))

  private def names(list: String): Seq[String] =
    list.split(",").toSeq.map(_.trim.toLowerCase(Locale.ROOT)).filter(_.nonEmpty)
}
