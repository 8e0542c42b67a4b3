package io.indextables.spark.transaction

import java.util.concurrent.ThreadLocalRandom

/** Exponential backoff with jitter, for writers that lost a race or hit a storage failure. */
private[transaction] object Backoff {

  /**
   * The delay before attempt `attempt + 1`: `baseMs` doubled per attempt, capped at `maxMs`,
   * then drawn from its upper half so that racing writers spread out.
   */
  def delayMs(attempt: Int, baseMs: Long, maxMs: Long): Long = {
    val exp = baseMs * (1L << math.min(attempt - 1, 30))
    val capped = math.min(maxMs, exp)
    if (capped <= 1) capped else capped / 2 + ThreadLocalRandom.current().nextLong(capped / 2 + 1)
  }
}
