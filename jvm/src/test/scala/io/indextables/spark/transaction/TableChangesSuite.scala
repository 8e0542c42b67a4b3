package io.indextables.spark.transaction

import java.io.File

import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.transaction.TransactionTestUtils._

/**
 * A stream's walk over a table's versions ([[TableChanges]]): the starting version's splits,
 * then each version's new splits in order, merges adding none, a bound on the splits per walk,
 * and a version that removed rows failing the walk unless it is skipped.
 */
class TableChangesSuite extends AnyFunSuite with BeforeAndAfterEach {

  override def beforeEach(): Unit = TransactionLog.clearCache()

  private def open(dir: File): TransactionLog =
    TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, Map.empty)

  private def commit(log: TransactionLog, operation: String)(actions: Seq[Action]): Long =
    log.startTransaction().commit(operation) {
      case None => Seq(Protocol, metadata()) ++ actions
      case Some(_) => actions
    }

  /**
   * Version 0: a, b. Version 1: c. Version 2: a and b merged into ab. Version 3: d, e. Version
   * 4: an overwrite of everything with f.
   */
  private def table(dir: File): TransactionLog = {
    val log = open(dir)
    commit(log, "WRITE")(Seq(add("a"), add("b")))
    commit(log, "WRITE")(Seq(add("c")))
    commit(log, "MERGE SPLITS")(
      Seq(add("a"), add("b")).map(_.removed(2L, dataChange = false)) :+
        add("ab").copy(dataChange = false))
    commit(log, "WRITE")(Seq(add("d"), add("e")))
    commit(log, "WRITE")(
      Seq("ab", "c", "d", "e").map(p => add(p).removed(4L, dataChange = true)) :+ add("f"))
    log
  }

  private def paths(splits: Seq[IndexedSplit]): Seq[String] = splits.map(_.add.path)

  test("from a starting version: its live splits, then each later version's new splits") {
    withTempDir { dir =>
      val changes = TableChanges.of(table(dir), skipChangeCommits = false)
      val from = ChangePosition(1L, -1L, isStartingVersion = true)
      assert(paths(changes.after(from, 3L)) == Seq("a", "b", "c", "d", "e"))
      // A merge's split is no new row.
      assert(paths(changes.after(ChangePosition.before(2L), 3L)) == Seq("d", "e"))
      assert(changes.end(from, 3L, changes.after(from, 3L), bounded = false) ==
        ChangePosition.before(4L))
    }
  }

  test("a bound splits a version between walks, and ranges give back what each walk read") {
    withTempDir { dir =>
      val changes = TableChanges.of(table(dir), skipChangeCommits = false)
      var at = ChangePosition(1L, -1L, isStartingVersion = true)
      val batches = Iterator.continually {
        val read = changes.after(at, 3L, Some(2))
        val end = changes.end(at, 3L, read, bounded = read.size >= 2)
        val range = changes.between(at, end)
        assert(range == read)
        at = end
        paths(read)
      }.takeWhile(_.nonEmpty).toList
      assert(batches == List(Seq("a", "b"), Seq("c", "d"), Seq("e")))
      // The last walk read fewer than its bound: it stands after version 3, whole.
      assert(at == ChangePosition.before(4L))
      assert(changes.after(at, 3L).isEmpty)
      assert(changes.end(at, 3L, Nil, bounded = false) == at)
    }
  }

  test("a version that removed rows fails the walk, naming it, unless change commits are skipped") {
    withTempDir { dir =>
      val log = table(dir)
      val e = intercept[IndexTablesException] {
        TableChanges.of(log, skipChangeCommits = false).after(ChangePosition.before(3L), 4L)
      }
      assert(e.errorClass == "INDEXTABLES_STREAMING_SOURCE_DATA_CHANGED")
      assert(e.getMessage.contains("Version 4") && e.getMessage.contains("skipChangeCommits"))
      // A walk that stops before it, by a bound or a range, does not read it.
      val changes = TableChanges.of(log, skipChangeCommits = false)
      assert(paths(changes.after(ChangePosition.before(3L), 4L, Some(2))) == Seq("d", "e"))
      assert(paths(changes.between(ChangePosition.before(3L), ChangePosition(3L, 1L, false))) ==
        Seq("d", "e"))
      // Skipped, the version adds nothing, its new split included.
      val skipping = TableChanges.of(log, skipChangeCommits = true)
      assert(paths(skipping.after(ChangePosition.before(3L), 4L)) == Seq("d", "e"))
    }
  }

  test("a version's split names its doc mapping from that version's registry") {
    val mapping = """[{"name":"x","type":"text"}]"""
    val actions = Seq(
      metadata(Map(SchemaHash.registryKey("h1") -> mapping)),
      add("s").copy(docMappingRef = Some("h1")),
      add("m").copy(dataChange = false))
    val changes = VersionChanges.of(7L, actions)
    assert(changes.added.map(a => (a.path, a.docMappingJson)) == Seq("s" -> Some(mapping)))
    assert(!changes.removesData)
  }
}
