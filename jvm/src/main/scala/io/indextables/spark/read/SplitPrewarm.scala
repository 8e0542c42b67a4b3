package io.indextables.spark.read

import java.util.Locale

import scala.jdk.CollectionConverters._

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.storage.SplitFileGate
import io.indextables.tantivy4java.split.SplitSearcher.IndexComponent

/**
 * Loads index components of splits into the caches a later read of them uses (the in-memory
 * cache and, when enabled, the L2 disk cache), and measures them. Executor side, through the
 * same searcher pool and cache manager as a read of the same [[ReadPlan]].
 */
object SplitPrewarm {

  /** Upstream's segment names (and tantivy4java's own) for each index component. */
  val ComponentNames: Map[String, IndexComponent] = Map(
    "TERM_DICT" -> IndexComponent.TERM,
    "TERM_DICTIONARY" -> IndexComponent.TERM,
    "TERM" -> IndexComponent.TERM,
    "FAST_FIELD" -> IndexComponent.FASTFIELD,
    "FASTFIELD" -> IndexComponent.FASTFIELD,
    "POSTINGS" -> IndexComponent.POSTINGS,
    "POSTING_LISTS" -> IndexComponent.POSTINGS,
    "POSITIONS" -> IndexComponent.POSITIONS,
    "POSITION_LISTS" -> IndexComponent.POSITIONS,
    "FIELD_NORM" -> IndexComponent.FIELDNORM,
    "FIELDNORM" -> IndexComponent.FIELDNORM,
    "DOC_STORE" -> IndexComponent.STORE,
    "STORE" -> IndexComponent.STORE
  )

  /** What a query needs first: the term dictionaries and the postings. */
  val DefaultComponents: Seq[IndexComponent] = Seq(IndexComponent.TERM, IndexComponent.POSTINGS)

  /** The components `names` give (the defaults when none); an unknown name fails naming it. */
  def components(names: Seq[String]): Seq[IndexComponent] =
    if (names.isEmpty) DefaultComponents
    else
      names.map { n =>
        ComponentNames.getOrElse(
          n.toUpperCase(Locale.ROOT),
          throw IndexTablesErrors.unknownIndexComponent(n, ComponentNames.keys.toSeq.sorted))
      }.distinct

  /**
   * Loads `components` of each split (of `fields` only, when given) and waits until they are
   * cached. Returns how many splits were warmed.
   */
  def prewarm(
      plan: ReadPlan,
      splits: Seq[SplitInputPartition],
      components: Seq[IndexComponent],
      fields: Seq[String]): Int = {
    splits.foreach { split =>
      withSearcher(plan, split) { searcher =>
        if (fields.isEmpty) searcher.preloadComponents(components: _*).get()
        else components.foreach(c => searcher.preloadFields(c, fields: _*).get())
      }
    }
    splits.size
  }

  /** The split's index size by field and component ("field.component", or "_component_total"). */
  def componentSizes(plan: ReadPlan, split: SplitInputPartition): Map[String, Long] =
    withSearcher(plan, split)(_.getPerFieldComponentSizes.asScala.map { case (k, v) =>
      k -> v.longValue()
    }.toMap)

  private def withSearcher[T](plan: ReadPlan, split: SplitInputPartition)(
      f: io.indextables.tantivy4java.split.SplitSearcher => T): T = {
    val use = SplitFileGate.enter()
    try {
      val checked = SplitSearchEngine.check(plan, split)
      val searcher = SplitSearchEngine.borrow(checked, split, plan)
      val result =
        try f(searcher)
        catch {
          case e: Throwable =>
            scala.util.Try(searcher.close())
            throw e
        }
      SplitSearchEngine.giveBack(checked, split, plan, searcher)
      result
    } finally use.end()
  }
}
