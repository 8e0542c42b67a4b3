package io.indextables.spark.read

import org.scalatest.funsuite.AnyFunSuite

class SplitGroupsSuite extends AnyFunSuite {

  private def split(i: Int, records: Long) =
    SplitInputPartition(s"part-$i.split", Map.empty, Some(records), None, 0L, 0L, None, false)

  private def splits(n: Int, records: Int => Long = _ => 100L) =
    (0 until n).map(i => split(i, records(i)))

  private def paths(groups: Seq[SplitGroup]) = groups.map(_.splits.map(_.path))

  test("auto: one split per task while there are no more splits than cores") {
    val s = splits(2)
    assert(paths(SplitGroups.of(s, "auto", 8, 2)) === Seq(Seq("part-0.split"), Seq("part-1.split")))
    assert(SplitGroups.of(Nil, "auto", 8, 2).isEmpty)
  }

  test("auto: whole rounds of tasks on every core, at most maxSplitsPerTask each, none lost") {
    val s = splits(20)
    val groups = SplitGroups.of(s, "auto", 8, 2)
    // 20 splits of at most 8 per task need 3 tasks, rounded up to 2 rounds of 2 cores: 4 of 5.
    assert(groups.map(_.splits.size) === Seq(5, 5, 5, 5))
    assert(groups.flatMap(_.splits).map(_.path).sorted === s.map(_.path).sorted)
    // Within a task, splits keep the log's order.
    groups.foreach { g =>
      val idx = g.splits.map(_.path.stripPrefix("part-").stripSuffix(".split").toInt)
      assert(idx === idx.sorted)
    }
    assert(SplitGroups.of(splits(100), "auto", 8, 4).forall(_.splits.size <= 8))
    assert(SplitGroups.of(splits(100), "auto", 8, 4).size % 4 === 0)
  }

  test("auto balances records: a large split does not share a task with many others") {
    val s = splits(9, i => if (i == 0) 800L else 100L)
    val groups = SplitGroups.of(s, "auto", 8, 2)
    val records = groups.map(_.splits.flatMap(_.numRecords).sum)
    assert(records.sorted === Seq(800L, 800L), groups)
  }

  test("a number takes that many consecutive splits per task") {
    val groups = SplitGroups.of(splits(7), "3", 8, 2)
    assert(groups.map(_.splits.size) === Seq(3, 3, 1))
    assert(paths(groups).head === Seq("part-0.split", "part-1.split", "part-2.split"))
    assert(SplitGroups.of(splits(7), "1", 8, 2).size === 7)
  }
}
