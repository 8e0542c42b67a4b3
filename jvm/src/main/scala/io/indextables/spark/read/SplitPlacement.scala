package io.indextables.spark.read

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.SparkContext
import org.apache.spark.sql.indextables.SparkExecutors

/**
 * Which executor reads a split, so that its caches (tantivy's in-memory cache, the L2 disk
 * cache, local copies) serve the next read of that split, and so that PREWARM warms the
 * executor that will read it. Rendezvous hashing: each split goes to the executor with the
 * highest hash of (split, executor), so adding or losing an executor moves only the splits it
 * gains or held. Without executors (local mode) there is no placement. Pure but for [[live]];
 * driver side.
 */
object SplitPlacement {

  /** The application's live executors (none in local mode). */
  def live(sc: SparkContext): Seq[Executor] =
    SparkExecutors.executors(sc).map { case (id, host) => Executor(id, host) }

  /** An executor: its id and host. */
  final case class Executor(id: String, host: String) {

    /** The task location Spark's scheduler honours for this executor. */
    def location: String = s"executor_${host}_$id"
  }

  /** The executor that reads the split at `path`, if there are executors. */
  def executorOf(path: String, executors: Seq[Executor]): Option[Executor] =
    if (executors.isEmpty) None else Some(executors.maxBy(e => weight(path, e.id)))

  private def weight(path: String, executorId: String): Long = {
    val bytes = (path + "\n" + executorId).getBytes(UTF_8)
    // FNV-1a, then a final mix: cheap, stable across JVMs.
    var h = 0xcbf29ce484222325L
    bytes.foreach { b => h = (h ^ (b & 0xff)) * 0x100000001b3L }
    h ^= h >>> 33; h *= 0xff51afd7ed558ccdL; h ^= h >>> 33
    h
  }
}
