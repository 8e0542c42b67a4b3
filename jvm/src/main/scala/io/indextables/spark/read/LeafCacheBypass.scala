package io.indextables.spark.read

import java.util.concurrent.atomic.AtomicLong

import io.indextables.tantivy4java.split.{SplitAggregation, SplitParsedQuery, SplitQuery}

/**
 * Makes every request a read sends unlike any earlier one, so that tantivy's leaf-search cache
 * (keyed by split and whole request) cannot answer it: what
 * `spark.indextables.cache.queryCache.enabled=false` promises.
 *
 * tantivy4java 0.31.0 gives no way to turn that cache off: its native layer never reads
 * `SplitCacheManager.CacheConfig.withQueryCache`, and `GlobalCacheConfig` (which sizes the
 * cache) loads the library through `java.library.path`, which fails where the library was
 * loaded from the jar, as it always is here. So a request differs instead, in a part that
 * cannot change its answer:
 *  - a search's query goes under a boost node of a boost not used before: the same documents
 *    match, and scaling every score by one factor never reverses two of them;
 *  - an aggregation request's top-level names carry a suffix not used before, taken off again
 *    in the results.
 * A boost is a float in [1, 2): 2^23 distinct values, far more requests than the cache holds
 * (it evicts the oldest first) before one recurs. Thread-safe.
 */
private[spark] object LeafCacheBypass {
  private val requests = new AtomicLong()
  private val Boosts = 1 << 23

  /** `q` as a read of `plan` sends it: as it is where the plan lets the cache answer. */
  def query(plan: ReadPlan, q: SplitQuery): SplitQuery = if (plan.queryCache) q else query(q)

  /** `aggs` as a read of `plan` sends them (see [[names]]), and how to read their names back. */
  def names(plan: ReadPlan, aggs: Map[String, SplitAggregation])
      : (Map[String, SplitAggregation], String => String) =
    if (plan.queryCache) (aggs, identity) else names(aggs)

  /** `q` under a boost not used before: the same matches. */
  def query(q: SplitQuery): SplitQuery = {
    val boost = 1.0f + (requests.getAndIncrement() % Boosts).toFloat / Boosts
    new SplitParsedQuery(
      s"""{"type":"boost","underlying":${q.toQueryAstJson},"boost":${java.lang.Float
          .toString(boost)}}""")
  }

  /** `aggs` under names not used before, and how to turn a result's name back. */
  def names(aggs: Map[String, SplitAggregation])
      : (Map[String, SplitAggregation], String => String) = {
    val suffix = s"~${requests.getAndIncrement()}"
    (aggs.map { case (n, a) => s"$n$suffix" -> a }, _.stripSuffix(suffix))
  }
}
