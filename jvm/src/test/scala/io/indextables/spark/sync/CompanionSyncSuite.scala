package io.indextables.spark.sync

import java.io.File

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesTestBase
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.schema.TableIndexSchema
import io.indextables.spark.transaction.TransactionTestUtils._
import io.indextables.spark.transaction._

/**
 * The build's parts that need no native index: partition types against Spark's own discovery,
 * the plan (kept, removed, re-indexed, grouped), and the commit against concurrent commits,
 * driven deterministically (a second build that committed between this one's plan and its
 * commit).
 */
class CompanionSyncSuite extends IndexTablesTestBase {

  private def file(path: String, size: Long = 10L, day: String = "d1") =
    SourceFile(path, size, 1L, Map("day" -> day))

  private def split(path: String, files: Seq[String], day: String = "d1") =
    AddAction(
      path,
      Map("day" -> day),
      5L,
      1L,
      dataChange = true,
      companionSourceFiles = Some(files))

  test("partition columns are typed as spark.read.parquet types them") {
    val dir = new File(tablePath("typed"))
    val values = Seq(
      "a=1/b=3000000000/c=1.5/d=2024-01-01/e=x/f=__HIVE_DEFAULT_PARTITION__/g=01",
      "a=2/b=3/c=2/d=2024-01-31/e=7/f=2/g=10",
      "a=3/b=4/c=2.5/d=2024-02-01/e=y/f=3/g=2"
    )
    values.foreach { v =>
      spark.range(1).toDF("id").coalesce(1).write.parquet(new File(dir, v).getPath)
    }
    val source = new ParquetDirectorySource(
      new Path(dir.toURI),
      spark.sessionState.newHadoopConf(),
      "UTC",
      typeInference = true)
    val listing = source.list()
    val expected = StructType(spark.read.parquet(dir.getPath).schema.filterNot(_.name == "id"))
    assert(listing.partitionSchema == expected)
    // Values as the log records them: the typed value cast back to string.
    val first = listing.files.find(_.path.startsWith("a=1/")).get
    assert(first.partitionValues("g") == "1" && first.partitionValues("f") == null)
    assert(first.partitionValues("d") == "2024-01-01")
    assert(source.dataSchemaOf(first) == StructType(Seq(StructField(
      "id",
      LongType,
      nullable = false))))
  }

  test("hidden files are skipped; files under different partition columns are refused") {
    val dir = new File(tablePath("layout"))
    spark.range(2).toDF("id").coalesce(1).write.parquet(new File(dir, "k=1").getPath)
    new File(dir, "_temporary/x").mkdirs()
    java.nio.file.Files.write(new File(dir, "_temporary/x/junk").toPath, Array[Byte](1))
    java.nio.file.Files.write(new File(dir, ".hidden.parquet").toPath, Array[Byte](1))
    val source =
      new ParquetDirectorySource(
        new Path(dir.toURI),
        spark.sessionState.newHadoopConf(),
        "UTC",
        true)
    assert(source.list().files.map(_.path).forall(_.startsWith("k=1/part-")))
    spark.range(2).toDF("id").coalesce(1).write.parquet(new File(dir, "other=1").getPath)
    val e = intercept[IndexTablesException](source.list())
    assert(e.errorClass == "INDEXTABLES_COMPANION_PARTITION_LAYOUT", e.getMessage)
  }

  test("the plan keeps whole splits, removes broken ones and indexes the rest, by partition") {
    val files = Seq(
      file("day=d1/a"),
      file("day=d1/c"),
      file("day=d1/d", size = 25L),
      file("day=d2/e", day = "d2"),
      file("day=d2/f", day = "d2"))
    val live = Seq(
      split("s1", Seq("day=d1/a")),
      split("s2", Seq("day=d1/b", "day=d1/c")), // b is gone
      split("s3", Seq("day=d3/z"), day = "d3") // outside the WHERE: stays
    )
    val plan = SyncPlanner.plan(files, live, _("day") != "d3", targetInputSize = 20L)
    assert(plan.kept.map(_.path).toSet == Set("s1", "s3"))
    assert(plan.removed.map(_.path) == Seq("s2"))
    assert(plan.groups.map(_.files.map(_.path)) ==
      Seq(Seq("day=d1/c"), Seq("day=d1/d"), Seq("day=d2/e", "day=d2/f")))
    assert(plan.groups.map(_.partitionValues("day")) == Seq("d1", "d1", "d2"))
  }

  test("a build smaller than the cluster's parallelism in target sizes gives every core a share") {
    val files = (1 to 8).map(i => file(f"day=d1/f$i%02d", size = 10L))
    def groups(parallelism: Int) =
      SyncPlanner.plan(files, Nil, _ => true, targetInputSize = 1000L, parallelism)
        .groups.map(_.files.size)
    assert(groups(1) == Seq(8))
    assert(groups(2) == Seq(4, 4))
    assert(groups(3) == Seq(3, 3, 2))
    assert(groups(16) == Seq.fill(8)(1))
    // The target still bounds a group.
    assert(SyncPlanner.plan(files, Nil, _ => true, targetInputSize = 20L, 2).groups.size == 4)
  }

  test("a split whose file no longer has the size it was indexed at is removed and re-indexed") {
    val files = Seq(file("day=d1/a", size = 10L), file("day=d1/b", size = 11L), file("day=d1/c"))
    def sized(path: String, f: String, size: Long) =
      split(path, Seq(f)).copy(companionSourceFileSizes = Some(Seq(size)))
    val live = Seq(
      sized("s1", "day=d1/a", 10L), // unchanged
      sized("s2", "day=d1/b", 7L), // rewritten in place since
      split("s3", Seq("day=d1/c")) // no size recorded: kept while present
    )
    val plan = SyncPlanner.plan(files, live, _ => true, targetInputSize = 100L)
    assert(plan.kept.map(_.path) == Seq("s1", "s3"))
    assert(plan.removed.map(_.path) == Seq("s2"))
    assert(plan.groups.map(_.files.map(_.path)) == Seq(Seq("day=d1/b")))
  }

  test("a source file's new deletion vector gives its split a new vector, or a rebuild") {
    def dv(id: String) = Some(SourceDeletionVector(id))
    val files = Seq(
      file("day=d1/a"),
      file("day=d1/b").copy(deletionVector = dv("v1")),
      file("day=d1/c").copy(deletionVector = dv("v2")),
      file("day=d1/d").copy(deletionVector = dv("v3")),
      file("day=d1/e"),
      file("day=d1/f").copy(deletionVector = dv("v4")),
      file("day=d1/g")
    )
    def ordered(path: String, fs: Seq[String], inOrder: Boolean, vectors: Option[Seq[String]]) =
      split(path, fs).copy(
        companionDocsInRowOrder = Some(inOrder),
        companionSourceDeletionVectors = vectors)
    val live = Seq(
      ordered("s1", Seq("day=d1/a", "day=d1/b"), inOrder = true, None), // b gained v1
      ordered("s2", Seq("day=d1/c"), inOrder = true, Some(Seq("v2"))), // unchanged
      ordered("s3", Seq("day=d1/d", "day=d1/e"), inOrder = false, None) // d gained v3
    )
    val plan = SyncPlanner.plan(files, live, _ => true, targetInputSize = 1000L)
    assert(plan.kept.map(_.path) == Seq("s2"))
    assert(plan.revectored.map(_.path) == Seq("s1"))
    assert(plan.removed.map(_.path) == Seq("s3"))
    // A file with a vector is indexed alone, so that its split holds its rows in order.
    assert(plan.groups.map(_.files.map(_.path)) ==
      Seq(Seq("day=d1/d"), Seq("day=d1/e"), Seq("day=d1/f"), Seq("day=d1/g")))
    // A split that records none reflects none: unchanged files keep it.
    val same = SyncPlanner.plan(
      Seq(file("day=d1/a")),
      Seq(ordered("s4", Seq("day=d1/a"), inOrder = false, None)),
      _ => true,
      100L)
    assert((same.kept.map(_.path), same.revectored, same.removed) == (Seq("s4"), Nil, Nil))
  }

  /** A one-column index at `dir` holding `splits`, as a first build commits it. */
  private def index(dir: File, splits: AddAction*): TransactionLog = {
    val log = logFor(dir.getAbsolutePath, hadoopConf, Map.empty)
    log.startTransaction().commit("CREATE") { _ =>
      Seq(
        TableFeatures.protocolWith(TableLayout.Companion.features),
        metadata(partitionColumns = Seq("day"))) ++ splits
    }
    log
  }

  private val schema = StructType(Seq(StructField("id", LongType), StructField("day", StringType)))
  private val indexing = CompanionIndexing(
    TableIndexSchema.resolve(schema, Seq("day"), Map.empty[String, String]),
    Nil,
    "DISABLED")
  private val request =
    CompanionBuildRequest(None, None, None, None, 1L << 30, 1L << 28, None, false)
  private val source =
    new ParquetDirectorySource(new Path("file:/source"), hadoopConf, "UTC", typeInference = true)

  private def commit(
      log: TransactionLog,
      base: Option[Snapshot],
      plan: SyncPlan,
      adds: AddAction*) = commitWith(log, base, plan, None, adds: _*)

  private def commitWith(
      log: TransactionLog,
      base: Option[Snapshot],
      plan: SyncPlan,
      schemaChange: Option[StructType],
      adds: AddAction*) =
    CompanionSync.commit(
      log,
      base,
      source,
      None,
      StructType(schema.take(1)),
      StructType(schema.drop(1)),
      schemaChange,
      indexing,
      plan,
      adds,
      Nil,
      request)

  test("a build that adds the source's new columns commits them, and a racing one fails") {
    withTempDir { dir =>
      val log = index(dir, split("s1", Seq("day=d1/a")))
      val base = Some(log.snapshot())
      val plan = SyncPlan(base.get.allFiles, Nil, Nil)
      val wider =
        StructType(schema.take(1) ++ Seq(StructField("region", StringType)) ++ schema.drop(1))
      assert(commitWith(log, base, plan, Some(wider), split("new", Seq("day=d1/b"))) == 1L)
      assert(DataType.fromJson(log.snapshot().metadata.schemaString) == wider)
      // Another build planned on the old columns commits nothing.
      val e = intercept[IndexTablesException](
        commitWith(log, base, plan, Some(wider), split("mine", Seq("day=d1/c"))))
      assert(e.errorClass == "INDEXTABLES_COMPANION_BUILD_CONFLICT", e.getMessage)
      assert(e.getMessage.contains("another build changed the index's columns"), e.getMessage)
      assert(log.snapshot().allFiles.map(_.path).toSet == Set("s1", "new"))
    }
  }

  test("a concurrent build that indexed the same files makes the later commit fail cleanly") {
    withTempDir { dir =>
      val log = index(dir, split("s1", Seq("day=d1/a")))
      val base = Some(log.snapshot())
      val plan = SyncPlan(base.get.allFiles, Nil, Seq(IndexGroup(0, Map("day" -> "d1"), Nil)))
      // The other build, planned on the same base, commits first.
      assert(commit(log, base, plan, split("other", Seq("day=d1/b"))) == 1L)
      val e =
        intercept[IndexTablesException](commit(log, base, plan, split("mine", Seq("day=d1/b"))))
      assert(e.errorClass == "INDEXTABLES_COMPANION_BUILD_CONFLICT", e.getMessage)
      assert(e.getMessage.contains("split other indexes files this build indexed"))
      assert(log.snapshot().allFiles.map(_.path).toSet == Set("s1", "other"))
    }
  }

  test("a concurrent commit over other files is committed over; a removed split is a conflict") {
    withTempDir { dir =>
      val log = index(dir, split("s1", Seq("day=d1/a")), split("s2", Seq("day=d1/b")))
      val base = Some(log.snapshot())
      val keep = SyncPlan(base.get.allFiles, Nil, Nil)
      assert(commit(log, base, keep, split("other", Seq("day=d1/c"))) == 1L)
      // Planned on version 0, committed after version 1: retried over it.
      assert(commit(log, base, keep, split("mine", Seq("day=d1/d"))) == 2L)
      assert(log.snapshot().allFiles.map(_.path).toSet == Set("s1", "s2", "other", "mine"))
      // Two builds that both remove s2 (its file gone): the second fails.
      val drop = SyncPlan(
        base.get.allFiles.filter(_.path == "s1"),
        base.get.allFiles.filter(
          _.path == "s2"),
        Nil)
      val now = Some(log.snapshot())
      assert(commit(log, now, drop) == 3L)
      val e = intercept[IndexTablesException](commit(log, now, drop))
      assert(e.errorClass == "INDEXTABLES_COMPANION_BUILD_CONFLICT", e.getMessage)
    }
  }

  test("two first builds: the one that finds the index created fails cleanly") {
    withTempDir { dir =>
      val log = logFor(dir.getAbsolutePath, hadoopConf, Map.empty)
      val plan = SyncPlan(Nil, Nil, Nil)
      assert(commit(log, None, plan, split("first", Seq("day=d1/a"))) == 0L)
      val created = log.snapshot()
      assert(created.protocol.readerFeatures.contains(Set(TableFeatures.CompanionLayout)))
      assert(created.metadata.configuration(TableLayout.SourceTablePathKey) == "file:/source")
      assert(created.metadata.partitionColumns == Seq("day"))
      val e = intercept[IndexTablesException](commit(log, None, plan, split("second", Seq("x"))))
      assert(e.errorClass == "INDEXTABLES_COMPANION_BUILD_CONFLICT", e.getMessage)
    }
  }
}
