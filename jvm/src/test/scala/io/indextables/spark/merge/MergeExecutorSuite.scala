package io.indextables.spark.merge

import java.io.File
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.transaction.TransactionTestUtils._
import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.transaction._

/**
 * The merge's commit against concurrent commits, and its plan: which groups are committed,
 * which given up, what the version holds (dataChange=false removes and adds, mergeskip actions
 * counting consecutive failures), and which merged files are deleted.
 */
class MergeExecutorSuite extends AnyFunSuite {

  private val conf = new Configuration()
  private val settings = MergeSettings(1L << 30, "", 1000, trackSkips = true, cooldownHours = 24)
  private val request = MergeRequest(MergeRequest.DefaultTargetSize, None, 1000)

  private def split(path: String, size: Long = 100L, time: Long = 1L, day: String = "d1") =
    AddAction(path, Map("day" -> day), size, time, dataChange = true, numRecords = Some(10L))

  private def table(dir: File, files: Seq[AddAction]): TransactionLog = {
    val log = logFor(dir.getAbsolutePath, conf, Map.empty)
    log.startTransaction().commit("CREATE") { _ =>
      Seq(Protocol, metadata(partitionColumns = Seq("day"))) ++ files
    }
    log
  }

  /** A merged split of `sources`, its file present in the table as an executor leaves it. */
  private def merged(dir: File, id: Int, name: String, sources: AddAction*): MergeOutcome.Merged = {
    val f = new File(dir, s"day=d1/$name")
    f.getParentFile.mkdirs()
    Files.write(f.toPath, Array[Byte](1, 2, 3))
    MergeOutcome.Merged(
      MergeGroup(id, Map("day" -> "d1"), sources),
      AddAction(
        s"day=d1/$name",
        Map("day" -> "d1"),
        3L,
        2L,
        dataChange = false,
        numRecords = Some(sources.size * 10L)))
  }

  test("a group whose source a concurrent overwrite removed is given up, the others commit") {
    withTempDir { dir =>
      val Seq(a, b, c, d) = Seq("a", "b", "c", "d").map(p => split(s"day=d1/$p.split"))
      val log = table(dir, Seq(a, b, c, d))
      val m1 = merged(dir, 0, "m1.split", a, b)
      val m2 = merged(dir, 1, "m2.split", c, d)
      // An overwrite commits after the merge planned, removing c.
      log.startTransaction().commit("WRITE") { _ =>
        Seq(RemoveAction(c.path, Some(5L), dataChange = true, Some(c.partitionValues), Some(100L)))
      }
      val result = MergeExecutor.commit(log, conf, Seq(m1, m2), settings, "MERGE SPLITS", request)
      assert(result.status == "partial")
      assert((result.mergeGroups, result.mergedFiles, result.conflictGroups) == ((1L, 2L, 1L)))
      assert(result.version.contains(2L))
      val actions = log.actionsOf(2L)
      val removes = actions.collect { case r: RemoveAction => r }
      val adds = actions.collect { case a: AddAction => a }
      assert(removes.map(_.path).toSet == Set(a.path, b.path))
      assert(removes.forall(!_.dataChange) && adds.forall(!_.dataChange))
      assert(adds.map(_.path) == Seq(m1.add.path))
      assert(new File(dir, m1.add.path).isFile)
      assert(!new File(dir, m2.add.path).exists(), "the given-up merged split is deleted")
      assert(log.snapshot().allFiles.map(_.path).toSet == Set(m1.add.path, d.path))
    }
  }

  test("a group whose source a concurrent DELETE gave a deletion vector is given up") {
    withTempDir { dir =>
      val Seq(a, b, c, d) = Seq("a", "b", "c", "d").map(p => split(s"day=d1/$p.split"))
      val log = table(dir, Seq(a, b, c, d))
      val m1 = merged(dir, 0, "m1.split", a, b)
      val m2 = merged(dir, 1, "m2.split", c, d)
      // A DELETE commits a vector on c after the merge read it: merging c's old rows would
      // bring the deleted ones back.
      val vector = DeletionVectorDescriptor("r", "day=d1/c.1.dv", Some(1), 20, 1L)
      log.startTransaction().commit("DELETE") { s =>
        Seq(
          TableFeatures.withFeature(s.get.protocol, TableFeatures.DeletionVectors),
          c.removed(5L, dataChange = true),
          c.copy(deletionVector = Some(vector)))
      }
      val result = MergeExecutor.commit(log, conf, Seq(m1, m2), settings, "MERGE SPLITS", request)
      assert((result.mergeGroups, result.conflictGroups) == ((1L, 1L)))
      assert(!new File(dir, m2.add.path).exists())
      val live = log.snapshot().allFiles
      assert(live.map(_.path).toSet == Set(m1.add.path, c.path, d.path))
      assert(live.find(_.path == c.path).get.deletionVector.contains(vector))
      // The merge's removes carry the vectors their entries had (none here).
      assert(log.actionsOf(result.version.get).collect { case r: RemoveAction => r }
        .forall(_.deletionVector.isEmpty))
      // A new plan leaves the split with a vector out: a native merge would keep its rows.
      val plan = MergePlanner.plan(log.snapshot(), request, _ => true, now = 10L)
      assert(plan.flatMap(_.sources).map(_.path).toSet == Set(m1.add.path, d.path))
    }
  }

  test("when every group lost its sources nothing is committed") {
    withTempDir { dir =>
      val Seq(a, b) = Seq("a", "b").map(p => split(s"day=d1/$p.split"))
      val log = table(dir, Seq(a, b))
      val m1 = merged(dir, 0, "m1.split", a, b)
      log.startTransaction().commit("WRITE") { s =>
        s.get.allFiles.map(f => RemoveAction(f.path, Some(5L), dataChange = true))
      }
      val result = MergeExecutor.commit(log, conf, Seq(m1), settings, "MERGE SPLITS", request)
      assert(result.status == "failed" && result.version.isEmpty && result.conflictGroups == 1)
      assert(log.latestVersion.contains(1L))
      assert(!new File(dir, m1.add.path).exists())
    }
  }

  test("a failed merge records a mergeskip for each source, counting consecutive failures") {
    withTempDir { dir =>
      val Seq(a, b) = Seq("a", "b").map(p => split(s"day=d1/$p.split"))
      val log = table(dir, Seq(a, b))
      val failure = MergeOutcome.Failed(MergeGroup(0, Map("day" -> "d1"), Seq(a, b)), "corrupt")
      val first = MergeExecutor.commit(log, conf, Seq(failure), settings, "MERGE SPLITS", request)
      assert(first.status == "failed" && first.failedGroups == 1 && first.version.contains(1L))
      assert(first.message.contains("corrupt"))
      val skips = log.actionsOf(1L).collect { case s: MergeSkipAction => s }
      assert(skips.map(_.path).toSet == Set(a.path, b.path))
      assert(skips.forall(s => s.operation == "merge" && s.skipCount == 1 && s.reason == "corrupt"))
      assert(skips.forall(s => s.retryAfter.exists(_ >= s.skipTimestamp + 24L * 3600 * 1000)))
      // Skipped sources are left out of the next plan until the cooldown ends.
      val now = System.currentTimeMillis()
      assert(MergePlanner.plan(log.snapshot(), request, _ => true, now).isEmpty)
      assert(MergePlanner.plan(log.snapshot(), request, _ => true, now + 25L * 3600 * 1000)
        .map(_.sources.map(_.path)) == Seq(Seq(a.path, b.path)))
      MergeExecutor.commit(log, conf, Seq(failure), settings, "MERGE SPLITS", request)
      assert(log.snapshot().mergeSkips.map(_.skipCount).toSet == Set(2))
    }
  }

  test("the plan packs small splits per partition in log order, honouring every limit") {
    withTempDir { dir =>
      val mb = 1L << 20
      val files = (1 to 6).map(i => split(s"day=d1/s$i.split", 30 * mb, time = i.toLong)) ++
        (1 to 3).map(i => split(s"day=d2/t$i.split", 10 * mb, time = i.toLong, day = "d2")) :+
        split("day=d2/big.split", 50 * mb, time = 9L, day = "d2")
      val log = table(dir, files)
      val snap = log.snapshot()
      def plan(r: MergeRequest, include: Map[String, String] => Boolean = _ => true) =
        MergePlanner.plan(snap, r, include, 0L).map(_.sources.map(_.path.split('/').last))
      // Target 100M: splits of 45M or more stay; 30M splits pack three to a group.
      val target = MergeRequest(100 * mb, None, 1000)
      assert(plan(target) == Seq(
        Seq("s1.split", "s2.split", "s3.split"),
        Seq("s4.split", "s5.split", "s6.split"),
        Seq("t1.split", "t2.split", "t3.split")))
      assert(plan(target.copy(maxSourceSplitsPerMerge = 2)) == Seq(
        Seq("s1.split", "s2.split"),
        Seq("s3.split", "s4.split"),
        Seq("s5.split", "s6.split"),
        Seq("t1.split", "t2.split")))
      assert(plan(target.copy(maxDestSplits =
        Some(1))) == Seq(Seq("s1.split", "s2.split", "s3.split")))
      assert(plan(target, _("day") == "d2") == Seq(Seq("t1.split", "t2.split", "t3.split")))
      // Target 60M: 30M splits are 50% of it and stay; the 10M ones still merge.
      assert(plan(MergeRequest(60 * mb, None, 1000)) == Seq(Seq(
        "t1.split",
        "t2.split",
        "t3.split")))
    }
  }

  test("merge on write merges each size tier apart, mergeFactor splits or more at a time") {
    withTempDir { dir =>
      val mb = 1L << 20
      val tiered = MergeRequest(1000 * mb, None, 1000, mergeFactor = Some(10))
      // Tiers of a 1000M target with factor 10: below 1M, below 10M, below 100M, and above.
      val floor = 1000 * mb / 1000
      assert(tiered.tier(floor - 1) == 0)
      assert(tiered.tier(floor) == 1)
      assert(tiered.tier(10 * floor - 1) == 1)
      assert(tiered.tier(10 * floor) == 2)
      assert(tiered.tier(100 * floor - 1) == 2)
      assert(tiered.tier(100 * floor) == 3)
      assert(tiered.tier(Long.MaxValue) == 3)
      // Log order interleaves the tiers (times 1, 2, 3, ... round robin): tiers, not ages,
      // decide the groups.
      val tier0 = (1 to 12).map(i => split(s"day=d1/a$i.split", mb / 2, time = 4L * i))
      val tier1 = (1 to 9).map(i => split(s"day=d1/b$i.split", 5 * mb, time = 4L * i + 1))
      val tier2 = (1 to 11).map(i => split(s"day=d1/c$i.split", 90 * mb, time = 4L * i + 2))
      val top = (1 to 3).map(i => split(s"day=d1/d$i.split", 400 * mb, time = 4L * i + 3))
      val above = split("day=d1/big.split", 500 * mb, time = 100L)
      val snap = table(dir, tier0 ++ tier1 ++ tier2 ++ top :+ above).snapshot()
      def names(fs: Seq[AddAction]) = fs.map(_.path.split('/').last)
      val groups = MergePlanner.plan(snap, tiered, _ => true, 0L).map(g => names(g.sources))
      // Tier 0: all twelve. Tier 1: nine, below the factor: none. Tier 2: eleven 90M splits,
      // 990M, fit the target: one group. Top tier: 400M splits pack two to the 1000M target,
      // the third alone waits. The 500M split is past the skip fraction (450M).
      assert(groups == Seq(names(tier0), names(tier2), names(top.take(2))))
      // The same table under MERGE SPLITS (no factor) packs every small split toward the target
      // in log order, whatever its size.
      val packed = MergePlanner.plan(snap, tiered.copy(mergeFactor = None), _ => true, 0L)
      assert(packed.flatMap(_.sources).size > 12 + 11 + 2)
      assert(packed.forall(g => g.sources.map(_.size).sum <= 1000 * mb))
    }
  }

  test("merge on write refuses a factor above maxSourceSplitsPerMerge, naming both settings") {
    def settings(pairs: (String, String)*) =
      MergeOnWriteSettings.of(IndexTablesOptions(
        (("spark.indextables.mergeOnWrite.enabled" -> "true") +: pairs).toMap))
    assert(settings("spark.indextables.mergeOnWrite.mergeFactor" -> "4").get.mergeFactor == 4)
    val e = intercept[IndexTablesException](settings(
      "spark.indextables.mergeOnWrite.mergeFactor" -> "20",
      "spark.indextables.merge.maxSourceSplitsPerMerge" -> "8"))
    assert(e.getErrorClass == "INDEXTABLES_INVALID_OPTION")
    assert(e.getMessage.contains("spark.indextables.mergeOnWrite.mergeFactor"))
    assert(e.getMessage.contains("spark.indextables.merge.maxSourceSplitsPerMerge (8)"))
  }
}
