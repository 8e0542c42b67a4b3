package io.indextables.spark.merge

import scala.collection.mutable

/**
 * Merge on write's bookkeeping, apart from Spark and the log: which tables are being merged,
 * which are owed a look (a write found no slot free for their merge), which looks are under way,
 * and the jobs `DESCRIBE INDEXTABLES MERGE JOBS` lists. It runs nothing itself: [[MergeOnWrite]]
 * runs the merges and the looks it hands out. Thread-safe: every method holds the instance's
 * lock.
 *
 * A table owed a merge has one `PENDING` row from the first write that found no slot until a
 * merge of it starts (the row becomes `RUNNING`, same id) or a look finds nothing to merge and
 * nothing else is owed to it (the row goes). So, whatever the moment, while a merge of a table
 * may still start, one of its rows is `PENDING` or `RUNNING`.
 *
 * @param maxJobsKept how many finished (`COMPLETED`, `FAILED`) jobs are kept; a `PENDING` or
 *   `RUNNING` row is never dropped
 */
private[merge] final class MergeSlots(maxJobsKept: Int, newId: () => String, now: () => Long) {

  private val history = mutable.LinkedHashMap.empty[String, MergeJob]
  private val running = mutable.Set.empty[String]

  /** Per table, the look owed to the last write that found no slot free. */
  private val pending = mutable.LinkedHashMap.empty[String, () => Unit]

  /** Per table, the looks handed out by [[takeLooks]] that have not ended. */
  private val looking = mutable.Map.empty[String, Int].withDefaultValue(0)

  /** Per table, the id of its `PENDING` row. */
  private val owed = mutable.Map.empty[String, String]

  /** Every job, oldest first. */
  def jobs: Seq[MergeJob] = synchronized(history.values.toList)

  /**
   * Takes the table's slot for a merge of `groups` groups, found by the write of `version` (or
   * by a look), and records its `RUNNING` job; when the table is being merged or the driver
   * runs `maxConcurrent` merges, leaves the table owed `lookAgain` (replacing an older look of
   * it), lists its `PENDING` row, naming this write, and returns None.
   */
  def reserve(
      table: String,
      version: Long,
      groups: Int,
      maxConcurrent: Int,
      lookAgain: () => Unit): Option[MergeJob] = synchronized {
    def job(id: String, status: String) =
      MergeJob(id, table, status, version, groups, now(), None, None, None)
    if (running.contains(table) || running.size >= maxConcurrent) {
      pending.put(table, lookAgain)
      val id = owed.getOrElseUpdate(table, newId())
      record(history.get(id) match {
        case Some(waiting) => waiting.copy(triggerVersion = version, totalGroups = groups)
        case None => job(id, "PENDING")
      })
      None
    } else {
      pending.remove(table)
      running += table
      val started = job(owed.remove(table).getOrElse(newId()), "RUNNING")
      record(started)
      Some(started)
    }
  }

  /** The merge of `finished`'s table ended as `finished` says: its slot is free. */
  def finish(finished: MergeJob): Unit = synchronized {
    running -= finished.tablePath
    record(finished)
  }

  /**
   * The looks owed to tables not being merged, taken, each counted under way until
   * [[lookEnded]]: a table being merged keeps its look until its own merge ends, so that the
   * look sees what that merge committed.
   */
  def takeLooks(): Seq[(String, () => Unit)] = synchronized {
    val taken = pending.toList.filterNot { case (table, _) => running.contains(table) }
    taken.foreach { case (table, _) =>
      pending.remove(table)
      looking(table) += 1
    }
    taken
  }

  /**
   * A look of `table` handed out by [[takeLooks]] ended, whatever it did. When no merge of the
   * table runs and nothing more is owed to it (no look pending or under way), its `PENDING`
   * row goes: the look found nothing to merge, or failed (and said so in the driver's log).
   */
  def lookEnded(table: String): Unit = synchronized {
    if (looking(table) <= 1) looking.remove(table) else looking(table) -= 1
    if (!running.contains(table) && !pending.contains(table) && !looking.contains(table))
      owed.remove(table).foreach(history.remove)
  }

  private def record(job: MergeJob): Unit = {
    history.put(job.jobId, job)
    def done(j: MergeJob) = j.status == "COMPLETED" || j.status == "FAILED"
    val finished = history.valuesIterator.count(done)
    if (finished > maxJobsKept) {
      val drop = history.valuesIterator
        .filter(done)
        .take(finished - maxJobsKept)
        .map(_.jobId)
        .toList
      drop.foreach(history.remove)
    }
  }
}
