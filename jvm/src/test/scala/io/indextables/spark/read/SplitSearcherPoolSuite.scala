package io.indextables.spark.read

import java.io.File

import io.indextables.spark.IndexTablesTestBase

/** Searchers are kept between reads of the same split file, and only of the same file. */
class SplitSearcherPoolSuite extends IndexTablesTestBase {

  private def planAndSplit(path: String): (ReadPlan, SplitInputPartition) =
    SplitFixtures.planAndSplit(spark, path)

  test("a searcher given back is borrowed again; one in use is never shared") {
    val path = tablePath("pool")
    spark.range(100).selectExpr("id", "cast(id as string) as s").coalesce(1)
      .write.format("indextables").save(path)
    val (plan, split) = planAndSplit(path)
    val checked = SplitSearchEngine.check(plan, split)
    val first = SplitSearchEngine.borrow(checked, split, plan)
    val second = SplitSearchEngine.borrow(checked, split, plan)
    assert(first ne second)
    SplitSearchEngine.giveBack(checked, split, plan, first)
    val again = SplitSearchEngine.borrow(checked, split, plan)
    assert(again eq first)
    SplitSearchEngine.giveBack(checked, split, plan, again)
    SplitSearchEngine.giveBack(checked, split, plan, second)
    // The pool key includes the searcher's cache settings.
    val cached = plan.copy(cacheMaxSize = plan.cacheMaxSize + 1)
    val other = SplitSearchEngine.borrow(SplitSearchEngine.check(cached, split), split, cached)
    assert((other ne first) && (other ne second))
    other.close()
  }

  test("a split file rewritten under the same path is a new identity: no kept searcher") {
    val path = tablePath("pool-rewritten")
    spark.range(50).selectExpr("id").coalesce(1).write.format("indextables").save(path)
    val (plan, split) = planAndSplit(path)
    val checked = SplitSearchEngine.check(plan, split)
    val s = SplitSearchEngine.borrow(checked, split, plan)
    SplitSearchEngine.giveBack(checked, split, plan, s)
    val f = new File(path, split.path)
    assert(f.setLastModified(f.lastModified() - 60000L))
    val changed = SplitSearchEngine.check(plan, split)
    assert(changed.identity !== checked.identity)
    val fresh = SplitSearchEngine.borrow(changed, split, plan)
    assert(fresh ne s)
    fresh.close()
  }
}
