package io.indextables.spark.read

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, StandardCopyOption}
import java.security.MessageDigest
import java.util.UUID

import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.rank.{RankStatistics, RankedIndex}
import io.indextables.spark.storage.{LocalSplitCache, LogStore}
import io.indextables.spark.transaction.TablePaths
import io.indextables.spark.util.BoundedCache
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * The splits of a table as the native ranker (`rank/`) reads them: each split extracted once
 * into an ordinary tantivy index directory beside the local split cache (tantivy4java's
 * `QuickwitSplit.extractSplit`; a split never changes under its identity, so the directory is
 * reused by every later read in any JVM on the machine), and opened once per JVM. The open
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

  // Each split's statistics for a query's terms, by split identity and query: immutable.
  private val statistics = new BoundedCache[(String, String), RankStatistics](16384)

  /** `f` applied to `split`'s ranked index, opened (and first extracted) if need be. */
  def withIndex[T](plan: ReadPlan, split: SplitInputPartition)(f: RankedIndex => T): T = {
    val checked = SplitSearchEngine.check(plan, split)
    val entry = lease(checked.identity, extracted(plan, split, checked))
    try f(entry.index)
    finally release(entry)
  }

  /** `split`'s statistics for the terms of `queryAstJson`, computed once per JVM. */
  def statisticsOf(plan: ReadPlan, split: SplitInputPartition, queryAstJson: String)
      : RankStatistics = {
    val checked = SplitSearchEngine.check(plan, split)
    statistics.getOrElseUpdate((checked.identity, queryAstJson)) {
      val entry = lease(checked.identity, extracted(plan, split, checked))
      try ranked(split, queryAstJson)(entry.index.statistics(queryAstJson))
      finally release(entry)
    }
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
      // Opened outside the lock: extracting a large split takes a while.
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

  private def release(e: Entry): Unit = open.synchronized {
    e.leases -= 1
    if (e.evicted && e.leases == 0) e.index.close()
  }

  /**
   * The ranked index of `split`, extracted into its directory first when no earlier read did:
   * into a fresh directory, renamed into place once whole, so that a reader never opens half
   * an extraction. Splits on S3 are copied to the local split cache first (the others are
   * local already, or were copied there by [[SplitSearchEngine.check]]).
   */
  private def extracted(
      plan: ReadPlan,
      split: SplitInputPartition,
      checked: SplitSearchEngine.CheckedSplit): RankedIndex = {
    val conf = plan.hadoopConf.value
    val settings = LocalSplitCache.Settings(conf)
    val dir = new File(settings.directory, "ranked-" + nameOf(checked.identity))
    if (!new File(dir, Complete).isFile) {
      val local =
        if (checked.s3.isEmpty) checked.where
        else {
          val p = TablePaths.resolve(LogStore.qualify(new Path(plan.tablePath), conf), split.path)
          LogStore.forPath(p, conf).localCopy(p, checked.identity, settings).getPath
        }
      val tmp = new File(settings.directory, s"ranked-tmp-${UUID.randomUUID()}")
      try {
        ranked(split, "extract")(QuickwitSplit.extractSplit(local, tmp.getPath))
        Files.write(new File(tmp, Complete).toPath, Array.emptyByteArray)
        try Files.move(tmp.toPath, dir.toPath, StandardCopyOption.ATOMIC_MOVE)
        catch {
          // Another reader put the same extraction in place first.
          case _: java.nio.file.FileAlreadyExistsException |
              _: java.nio.file.DirectoryNotEmptyException if new File(dir, Complete).isFile =>
        }
      } finally if (tmp.exists()) deleteTree(tmp)
    }
    ranked(split, "open")(RankedIndex.open(dir.toPath))
  }

  private val Complete = ".indextables-complete"

  private def nameOf(identity: String): String =
    MessageDigest.getInstance("SHA-256").digest(identity.getBytes(UTF_8)).take(20)
      .map(b => f"${b & 0xff}%02x").mkString

  private def deleteTree(f: File): Unit = {
    Option(f.listFiles()).foreach(_.foreach(deleteTree))
    f.delete()
  }
}
