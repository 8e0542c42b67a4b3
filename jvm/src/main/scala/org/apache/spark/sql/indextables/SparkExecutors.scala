package org.apache.spark.sql.indextables

import scala.reflect.ClassTag

import org.apache.spark.{SparkContext, SparkEnv}

/**
 * Runs a function once in every JVM of the application: the driver and each live executor.
 * Cache commands (flush, describe, prewarm placement) need this; Spark offers no public way to
 * address an executor, so this reaches its block manager master for the executor ids and
 * places one task on each with an executor-cache location (`executor_<host>_<id>`). A task that
 * lands elsewhere (its executor busy past the locality wait) is run again for the executors
 * still missing, a few times. Driver side.
 */
object SparkExecutors {

  /** The application's executors as (executor id, host), the driver excluded. */
  def executors(sc: SparkContext): Seq[(String, String)] =
    if (sc.isLocal) Nil
    else
      SparkEnv.get.blockManager.master.getMemoryStatus.keys.toSeq
        .filter(_.executorId != SparkContext.DRIVER_IDENTIFIER)
        .map(b => (b.executorId, b.host)).distinct.sortBy(_._1)

  /**
   * `f`'s result in the driver ("driver") and in each executor, by executor id. In local mode
   * the driver is the only JVM. At most `rounds` jobs try to reach executors not yet reached.
   */
  def onEveryJvm[T: ClassTag](sc: SparkContext, rounds: Int = 3)(f: () => T): Seq[(String, T)] = {
    val onDriver = SparkContext.DRIVER_IDENTIFIER -> f()
    var missing = executors(sc)
    var reached = Map.empty[String, T]
    var round = 0
    while (missing.nonEmpty && round < rounds) {
      val tasks = missing.map { case (id, host) => (id, Seq(s"executor_${host}_$id")) }
      val results = sc.makeRDD(tasks).map(_ => (SparkEnv.get.executorId, f())).collect()
      results.foreach { case (id, r) => if (!reached.contains(id)) reached += id -> r }
      missing = missing.filterNot { case (id, _) => reached.contains(id) }
      round += 1
    }
    onDriver +: reached.toSeq.sortBy(_._1)
  }
}
