package io.indextables.spark.read

import java.io.File

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.rank.RankedIndex
import io.indextables.spark.storage.{LocalSplitCache, LogStore}
import io.indextables.spark.transaction.TablePaths

/**
 * The splits of a table as the native ranker (`rank/`) reads them: each split file opened
 * read-only in place (memory-mapped, nothing extracted; a split never changes under its
 * identity), once per JVM. The open
 * indexes are leased: at most [[MaxOpen]] stay open, least recently used closed first, and an
 * index is closed only when no lease holds it, so a native call never meets a closed handle.
 * Runs on executors, and on the driver for a top-k's selection and the table's statistics.
 */
private[read] object RankedSplits {

  /** Indexes kept open between reads in one JVM. */
  val MaxOpen = 256

  private final class Entry(val index: RankedIndex) {
    var leases = 0
    var evicted = false
  }

  // Access-ordered: the eldest entry is the least recently leased.
  private val open = new java.util.LinkedHashMap[String, Entry](16, 0.75f, true)

  /** `f` applied to `split`'s ranked index, opened if need be. */
  def withIndex[T](plan: ReadPlan, split: SplitInputPartition)(f: RankedIndex => T): T = {
    val checked = SplitSearchEngine.check(plan, split)
    val entry = lease(checked.identity, opened(plan, split, checked))
    try f(entry.index)
    finally release(entry)
  }

  /**
   * `f` applied to the ranked indexes of all of `splits` at once (in their order), each opened
   * if need be: for one native call over many splits. Splits are checked and opened on the
   * driver's threads; every lease taken is given back, whatever fails.
   */
  def withIndexes[T](plan: ReadPlan, splits: Seq[SplitInputPartition], threads: Int)(
      f: Seq[RankedIndex] => T): T = {
    val leased = DriverThreads.map(splits, threads) { split =>
      scala.util.Try {
        val checked = SplitSearchEngine.check(plan, split)
        lease(checked.identity, opened(plan, split, checked))
      }
    }
    try f(leased.map(_.get.index))
    finally leased.foreach(_.foreach(release))
  }

  /** `f`, its failure reported as the ranking of `split` for `query`. */
  def ranked[T](split: SplitInputPartition, query: String)(f: => T): T =
    try f
    catch {
      case e: IndexTablesException => throw e
      case e: Exception => throw IndexTablesErrors.rankingFailed(split.path, query, e)
    }

  private def lease(identity: String, opening: => RankedIndex): Entry = {
    val existing = open.synchronized {
      Option(open.get(identity)).map { e => e.leases += 1; e }
    }
    existing.getOrElse {
      // Opened outside the lock: a split on S3 is copied first.
      val index = opening
      open.synchronized {
        Option(open.get(identity)) match {
          case Some(e) =>
            index.close()
            e.leases += 1
            e
          case None =>
            val e = new Entry(index)
            e.leases = 1
            open.put(identity, e)
            while (open.size > MaxOpen) {
              val eldest = open.entrySet().iterator()
              val old = eldest.next().getValue
              eldest.remove()
              old.evicted = true
              if (old.leases == 0) old.index.close()
            }
            e
        }
      }
    }
  }

  /**
   * Closes every open index no native call holds, and marks the held ones to close when their
   * call ends (FLUSH SEARCHER CACHE / FLUSH DISK CACHE: a closed index also lets go of its
   * memory map, so the disk space of a deleted local copy is freed). How many it closed.
   */
  def closeIdle(): Int = open.synchronized {
    var closed = 0
    val it = open.entrySet().iterator()
    while (it.hasNext) {
      val e = it.next().getValue
      it.remove()
      e.evicted = true
      if (e.leases == 0) {
        e.index.close()
        closed += 1
      }
    }
    closed
  }

  private def release(e: Entry): Unit = open.synchronized {
    e.leases -= 1
    if (e.evicted && e.leases == 0) e.index.close()
  }

  /**
   * The ranked index of `split`: the split file itself, opened read-only and memory-mapped by
   * the ranker (no copy). Splits on S3 are copied to the local split cache first (the others
   * are local already, or were copied there by [[SplitSearchEngine.check]]).
   */
  private def opened(
      plan: ReadPlan,
      split: SplitInputPartition,
      checked: SplitSearchEngine.CheckedSplit): RankedIndex = {
    val local =
      if (checked.s3.isEmpty) checked.where
      else {
        val conf = plan.hadoopConf.value
        val p = TablePaths.resolve(plan.root, split.path)
        LogStore.forPath(p, conf).localCopy(p, checked.identity, LocalSplitCache.Settings(conf))
          .getPath
      }
    ranked(split, "open")(RankedIndex.openSplit(new File(local).toPath))
  }
}
