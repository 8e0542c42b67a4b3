package io.indextables.spark.util

import org.apache.spark.SparkContext

/**
 * Names the Spark jobs of one IndexTables operation (MERGE SPLITS, merge on write, a companion
 * build) where the Spark UI's Jobs tab and the console progress bar show them:
 * `IndexTables <operation> <table>: <step>`, for example
 * `IndexTables MERGE SPLITS s3://bucket/logs: merging 24 splits in 12 groups`.
 *
 * Spark takes a job's description from the local property `spark.job.description` of the thread
 * that submits it (what `SparkContext.setJobDescription` sets); a thread started from another
 * inherits a copy of that thread's properties, so a pool thread holds whatever its creator had
 * then. [[describing]] sets the property on the calling thread for the operation's jobs, and puts
 * back what was there before once the operation ends, also when it throws: the user's own
 * description (or the caller's, as a write's for its merge on write) holds again after, as
 * Delta's `withJobDescription` does. Driver side; the steps of one operation are its thread's.
 */
object JobDescription {

  /** Spark's key (`SparkContext.SPARK_JOB_DESCRIPTION`, which is private to Spark). */
  val Key: String = "spark.job.description"

  /** The description of the jobs of `operation` on `table` at `step`. */
  def of(operation: String, table: String, step: String): String =
    s"IndexTables $operation $table: $step"

  /** `n` and the noun, plural unless `n` is 1: `1 split`, `24 splits`. */
  def count(n: Long, noun: String): String = if (n == 1) s"1 $noun" else s"$n ${noun}s"

  /** The steps of one operation: each names the jobs its thread submits after it. */
  final class Steps private[JobDescription] (sc: SparkContext, operation: String, table: String) {
    def step(what: String): Unit = sc.setLocalProperty(Key, of(operation, table, what))
  }

  /**
   * Runs `body` with the jobs this thread submits described as `operation` on `table` at step
   * `first` (and at each later step `body` names), then restores the thread's description.
   */
  def describing[T](sc: SparkContext, operation: String, table: String, first: String)(
      body: Steps => T): T = {
    val previous = sc.getLocalProperty(Key)
    val steps = new Steps(sc, operation, table)
    steps.step(first)
    try body(steps)
    finally sc.setLocalProperty(Key, previous)
  }
}
