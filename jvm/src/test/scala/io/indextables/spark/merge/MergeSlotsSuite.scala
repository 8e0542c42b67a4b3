package io.indextables.spark.merge

import org.scalatest.funsuite.AnyFunSuite

/**
 * Merge on write's bookkeeping, driven through the interleavings of writes, merge ends and looks
 * that [[MergeOnWrite]] runs on its threads. The invariant under test: while a merge of a table
 * may still start, one of its rows is PENDING or RUNNING; once nothing is owed, none is.
 */
class MergeSlotsSuite extends AnyFunSuite {

  private def slots(kept: Int = 1000) = {
    var id = 0
    new MergeSlots(kept, () => { id += 1; s"merge-$id" }, () => 0L)
  }

  private val noLook: () => Unit = () => ()

  private def statuses(s: MergeSlots, table: String): Seq[String] =
    s.jobs.filter(_.tablePath == table).map(_.status)

  private def done(j: MergeJob) = j.copy(status = "COMPLETED", endTime = Some(1L))

  test("a write that finds its table being merged leaves one PENDING row, naming the latest") {
    val s = slots()
    val first = s.reserve("t", 1, 2, 3, noLook).get
    assert(first.status == "RUNNING")
    assert(s.reserve("t", 2, 2, 3, noLook).isEmpty)
    assert(s.reserve("t", 3, 4, 3, noLook).isEmpty)
    val pending = s.jobs.filter(_.status == "PENDING")
    assert(pending.map(p => (p.triggerVersion, p.totalGroups)) == Seq((3L, 4)))
    // No look is handed out while the table's own merge runs.
    assert(s.takeLooks().isEmpty)
    s.finish(done(first))
    val Seq((table, _)) = s.takeLooks()
    assert(table == "t")
    // Between the merge's end and the look's start, the owed merge is still listed.
    assert(statuses(s, "t") == Seq("COMPLETED", "PENDING"))
    // The look starts the merge: the PENDING row becomes RUNNING, with its id.
    val second = s.reserve("t", 3, 4, 3, noLook).get
    assert(second.jobId == pending.head.jobId)
    s.lookEnded("t")
    assert(statuses(s, "t") == Seq("COMPLETED", "RUNNING"))
  }

  test("a look that finds nothing to merge ends the PENDING row; a failed look too") {
    for (failed <- Seq(false, true)) {
      val s = slots()
      val first = s.reserve("t", 1, 2, 3, noLook).get
      assert(s.reserve("t", 2, 2, 3, noLook).isEmpty)
      s.finish(done(first))
      val Seq((_, look)) = s.takeLooks()
      // The look plans, finds fewer groups than the threshold (or throws), and ends.
      try if (failed) throw new RuntimeException("the log was unreadable") else look()
      catch { case _: RuntimeException => }
      finally s.lookEnded("t")
      assert(statuses(s, "t") == Seq("COMPLETED"), failed)
    }
  }

  test("a table pending while merged keeps its look until its own merge ends") {
    // Tables t and u are merged; a write on t finds t's slot taken; u's merge ends first. The
    // look must not run now (t's merge may have committed without freeing its slot yet, and the
    // look would find nothing and end the row while t still owes a look): it waits for t's end.
    val s = slots()
    val t = s.reserve("t", 1, 2, 3, noLook).get
    val u = s.reserve("u", 1, 2, 3, noLook).get
    assert(s.reserve("t", 2, 2, 3, noLook).isEmpty)
    s.finish(done(u))
    assert(s.takeLooks().isEmpty)
    assert(statuses(s, "t") == Seq("RUNNING", "PENDING"))
    s.finish(done(t))
    assert(s.takeLooks().map(_._1) == Seq("t"))
  }

  test("a look under way keeps the row although a write finds its table busy again") {
    // The look is taken; before it plans, a write takes the table's slot (the row becomes its
    // RUNNING job); the look then finds the slot taken and leaves the table pending again.
    val s = slots()
    val first = s.reserve("t", 1, 2, 3, noLook).get
    assert(s.reserve("t", 2, 2, 3, noLook).isEmpty)
    s.finish(done(first))
    val Seq(_) = s.takeLooks()
    val second = s.reserve("t", 3, 2, 3, noLook).get
    assert(s.reserve("t", 3, 2, 3, noLook).isEmpty) // the look, too late
    s.lookEnded("t")
    assert(statuses(s, "t") == Seq("COMPLETED", "RUNNING", "PENDING"))
    s.finish(done(second))
    val Seq(_) = s.takeLooks()
    s.lookEnded("t") // found nothing left
    assert(statuses(s, "t") == Seq("COMPLETED", "COMPLETED"))
  }

  test("two looks of one table under way: the row goes when the last ends") {
    val s = slots()
    val first = s.reserve("t", 1, 2, 1, noLook).get
    assert(s.reserve("t", 2, 2, 1, noLook).isEmpty)
    s.finish(done(first))
    val Seq(_) = s.takeLooks()
    // The first look finds the driver's one slot taken by another table, and pends again.
    val other = s.reserve("u", 1, 2, 1, noLook).get
    assert(s.reserve("t", 2, 2, 1, noLook).isEmpty)
    s.finish(done(other))
    val Seq(_) = s.takeLooks().filter(_._1 == "t")
    s.lookEnded("t")
    assert(statuses(s, "t").contains("PENDING"), "one look of t is still under way")
    s.lookEnded("t")
    assert(statuses(s, "t") == Seq("COMPLETED"))
  }

  test("the driver's limit of merges makes other tables pending; any merge end looks at them") {
    val s = slots()
    val t = s.reserve("t", 1, 2, 1, noLook).get
    assert(s.reserve("u", 1, 2, 1, noLook).isEmpty)
    assert(statuses(s, "u") == Seq("PENDING"))
    s.finish(done(t))
    assert(s.takeLooks().map(_._1) == Seq("u"))
    assert(s.reserve("u", 1, 2, 1, noLook).get.status == "RUNNING")
  }

  test("only finished jobs are dropped past the limit kept") {
    val s = slots(kept = 2)
    val owedEarly = s.reserve("t", 1, 2, 1, noLook).get
    assert(s.reserve("early", 1, 2, 1, noLook).isEmpty) // PENDING, the oldest row
    (1 to 5).foreach(v => s.finish(done(owedEarly.copy(jobId = s"old-$v", tablePath = s"o$v"))))
    assert(s.jobs.map(_.status) == Seq("RUNNING", "PENDING", "COMPLETED", "COMPLETED"))
    assert(s.jobs.filter(_.status == "COMPLETED").map(_.jobId) == Seq("old-4", "old-5"))
  }
}
