package io.indextables.bench

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.UUID

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, EqualTo, Literal}
import org.apache.spark.sql.delta.actions.{AddFile, Metadata => DeltaMetadata}
import org.apache.spark.sql.delta.{DeltaLog, DeltaOperations}
import org.apache.spark.sql.types._

import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.transaction._
import io.indextables.spark.transaction.state.PartitionBounds

/**
 * The four transaction-log operations of issue 4 at scale, on an IndexTables log and on a Delta
 * Lake log (delta-spark 3.3) holding the same files, timed side by side in one JVM:
 *
 *  1. snapshot load: a fresh handle lists the live files of a table of `--live` files;
 *  2. incremental commit: `--commit` new files appended on a handle that has read the table;
 *  3. compaction: a whole checkpoint of a table of `--compact` files (our Avro state compacted,
 *     Delta's parquet checkpoint);
 *  4. pruning: a fresh handle lists the files of one partition of a `--prune`-file table.
 *
 * Tables are partitioned by `date` (`--partitions` days) and their files carry the statistics
 * the write path records. Both logs are built through their own commit APIs, then checkpointed.
 * Reports the median, min and max of `--runs` runs after one warm-up, and our median over
 * Delta's, as JSON and Markdown under `--out`.
 */
object LogScaleBench {

  final case class Conf(
      live: Int = 100000,
      commit: Int = 100,
      compact: Int = 70000,
      prune: Int = 1000000,
      partitions: Int = 100,
      runs: Int = 5,
      out: File = new File("target/bench-log"),
      delta: Boolean = true)

  final case class Timing(name: String, system: String, runsMs: Seq[Double], detail: String) {
    private val sorted = runsMs.sorted
    def median: Double = sorted(sorted.size / 2)
    def min: Double = sorted.head
    def max: Double = sorted.last
  }

  private val hadoopConf = new Configuration()
  private val StatsColumns = Seq("timestamp", "level", "host", "latency_ms", "message")
  private val DocMappingRef = "Q2gD8yRk3l0P1mZa"

  def main(args: Array[String]): Unit = {
    val conf = parse(args.toList, Conf())
    conf.out.mkdirs()
    val work = Files.createTempDirectory(conf.out.toPath.toAbsolutePath, "work").toFile
    val spark = SparkSession.builder().master("local[2]").appName("log-scale-bench")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "2")
      .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
      .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
      .getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    val timings = mutable.Buffer.empty[Timing]
    try {
      timings ++= snapshotAndCommit(spark, conf, work)
      timings ++= compaction(spark, conf, work)
      timings ++= pruning(spark, conf, work)
    } finally {
      spark.stop()
      deleteRecursively(work)
    }
    report(conf, timings.toSeq)
  }

  // --- the four operations -------------------------------------------------------------------

  private def snapshotAndCommit(spark: SparkSession, conf: Conf, work: File): Seq[Timing] = {
    val ours = new File(work, "ours-live").getAbsolutePath
    val delta = new File(work, "delta-live").getAbsolutePath
    buildOurs(ours, conf.live, conf.partitions)
    if (conf.delta) buildDelta(spark, delta, conf.live, conf.partitions)

    val load = timed(conf.runs) {
      TransactionLog.clearCache()
      val n = openOurs(ours).snapshot().allFiles.size
      require(n == conf.live, s"our snapshot holds $n files, expected ${conf.live}")
    }
    val results = mutable.Buffer(Timing(
      "snapshot load",
      "IndexTables",
      load,
      s"${conf.live} live files, Avro state"))
    if (conf.delta) {
      results += Timing(
        "snapshot load",
        "Delta",
        timed(conf.runs) {
          DeltaLog.clearCache()
          val n = DeltaLog.forTable(spark, delta).update().allFiles.collect().length
          require(n == conf.live, s"Delta's snapshot holds $n files, expected ${conf.live}")
        },
        s"${conf.live} live files, parquet checkpoint; allFiles collected"
      )
    }

    // Commits on a handle that has read the table, as a writer's driver does.
    TransactionLog.clearCache()
    val log = openOurs(ours)
    log.snapshot().allFiles.size
    var batch = 0
    results += Timing(
      "incremental commit",
      "IndexTables",
      timed(conf.runs) {
        batch += 1
        val adds = (0 until conf.commit).map(i => ourAdd(s"commit$batch-$i", date(i, conf)))
        log.startTransaction().commit("WRITE")(_ => adds)
      },
      s"${conf.commit} files onto ${conf.live}"
    )
    if (conf.delta) {
      DeltaLog.clearCache()
      val dlog = DeltaLog.forTable(spark, delta)
      dlog.update().allFiles.count()
      results += Timing(
        "incremental commit",
        "Delta",
        timed(conf.runs) {
          batch += 1
          val adds = (0 until conf.commit).map(i => deltaAdd(s"commit$batch-$i", date(i, conf)))
          dlog.startTransaction().commit(adds, DeltaOperations.ManualUpdate)
        },
        s"${conf.commit} files onto ${conf.live}"
      )
    }
    deleteRecursively(new File(ours))
    deleteRecursively(new File(delta))
    results.toSeq
  }

  private def compaction(spark: SparkSession, conf: Conf, work: File): Seq[Timing] = {
    val ours = new File(work, "ours-compact").getAbsolutePath
    val delta = new File(work, "delta-compact").getAbsolutePath
    buildOurs(ours, conf.compact, conf.partitions)
    TransactionLog.clearCache()
    val log = openOurs(ours)
    var extra = 0
    // Each run checkpoints a new version (one more file), with the snapshot already loaded.
    val oursRuns = timedWithSetup(conf.runs) {
      extra += 1
      log.startTransaction().commit("WRITE")(_ => Seq(ourAdd(s"extra-$extra", date(extra, conf))))
      log.snapshot().allFiles.size
    } {
      val cp = CheckpointWriter.checkpoint(log, log.snapshot(), forceCompaction = true)
      require(cp.numFiles >= conf.compact)
    }
    val results = mutable.Buffer(Timing(
      "compaction",
      "IndexTables",
      oursRuns,
      s"${conf.compact} files rewritten into a new Avro state"))
    deleteRecursively(new File(ours))
    if (conf.delta) {
      buildDelta(spark, delta, conf.compact, conf.partitions)
      val dlog = DeltaLog.forTable(spark, delta)
      results += Timing(
        "compaction",
        "Delta",
        timedWithSetup(conf.runs) {
          extra += 1
          dlog.startTransaction().commit(
            Seq(deltaAdd(s"extra-$extra", date(extra, conf))),
            DeltaOperations.ManualUpdate)
          dlog.update().allFiles.count()
        } {
          dlog.checkpoint(dlog.update())
        },
        s"${conf.compact} files into a new parquet checkpoint"
      )
      deleteRecursively(new File(delta))
    }
    results.toSeq
  }

  private def pruning(spark: SparkSession, conf: Conf, work: File): Seq[Timing] = {
    val ours = new File(work, "ours-prune").getAbsolutePath
    val delta = new File(work, "delta-prune").getAbsolutePath
    val perPartition = conf.prune / conf.partitions
    buildOurs(ours, conf.prune, conf.partitions)
    var run = 0
    def day(): String = { run += 1; date(run * 37, conf) }
    val results = mutable.Buffer(Timing(
      "one-partition pruning",
      "IndexTables",
      timed(conf.runs) {
        TransactionLog.clearCache()
        val d = day()
        val keep: Snapshot.ManifestFilter = b =>
          b.get("date") match {
            case Some(PartitionBounds(Some(lo), Some(hi))) => lo <= d && d <= hi
            case _ => true
          }
        val n = openOurs(ours).snapshot().filesMatching(keep, _.get("date").contains(d))
          .count(_.partitionValues("date") == d)
        require(n == perPartition, s"our pruning found $n files of $d, expected $perPartition")
      },
      s"${conf.prune} entries, ${conf.partitions} partitions, fresh handle"
    ))
    deleteRecursively(new File(ours))
    if (conf.delta) {
      buildDelta(spark, delta, conf.prune, conf.partitions)
      val attr = AttributeReference("date", StringType)()
      results += Timing(
        "one-partition pruning",
        "Delta",
        timed(conf.runs) {
          DeltaLog.clearCache()
          val d = day()
          val scan = DeltaLog.forTable(spark, delta).update()
            .filesForScan(Seq(EqualTo(attr, Literal(d))), false)
          val n = scan.files.size
          require(
            n == perPartition,
            s"Delta's pruning found $n files of $d, expected $perPartition")
        },
        s"${conf.prune} entries, ${conf.partitions} partitions, fresh DeltaLog"
      )
      deleteRecursively(new File(delta))
    }
    results.toSeq
  }

  // --- building the tables --------------------------------------------------------------------

  private val BatchSize = 50000

  private def openOurs(path: String): TransactionLog =
    TransactionLog.forTable(
      path,
      hadoopConf,
      IndexTablesOptions(Map(IndexTablesConf.CheckpointEnabled.key -> "false")).logSettings)

  /** Our table: version 0 creates it, batches of files follow, and a compacted Avro state. */
  private def buildOurs(path: String, files: Int, partitions: Int): Unit = {
    val t0 = System.nanoTime()
    TransactionLog.clearCache()
    val log = openOurs(path)
    log.startTransaction().commit("CREATE TABLE")(_ => Seq(ProtocolAction(4, 4), ourMetadata))
    // Files arrive day by day, as a daily-partitioned table fills up.
    val days = (0 until partitions).map(p => date(p, partitions))
    val perDay = files / partitions
    val all = days.iterator.flatMap(d => (0 until perDay).iterator.map(i => (d, i)))
    all.grouped(BatchSize).zipWithIndex.foreach { case (chunk, b) =>
      val adds = chunk.map { case (d, i) => ourAdd(s"$b-$i", d) }
      log.startTransaction().commit("WRITE")(_ => adds)
    }
    CheckpointWriter.checkpoint(log, log.snapshot(), forceCompaction = true)
    TransactionLog.clearCache()
    note(s"built our table of $files files in ${(System.nanoTime() - t0) / 1000000} ms")
  }

  private def buildDelta(spark: SparkSession, path: String, files: Int, partitions: Int): Unit = {
    val t0 = System.nanoTime()
    DeltaLog.clearCache()
    val dlog = DeltaLog.forTable(spark, path)
    val first = dlog.startTransaction()
    first.updateMetadataForNewTable(DeltaMetadata(
      schemaString = schema.json,
      partitionColumns = Seq("date"),
      configuration = Map("delta.checkpointInterval" -> "1000000")))
    first.commit(Nil, DeltaOperations.ManualUpdate)
    val days = (0 until partitions).map(p => date(p, partitions))
    val perDay = files / partitions
    val all = days.iterator.flatMap(d => (0 until perDay).iterator.map(i => (d, i)))
    all.grouped(BatchSize).zipWithIndex.foreach { case (chunk, b) =>
      dlog.startTransaction().commit(
        chunk.map { case (d, i) => deltaAdd(s"$b-$i", d) },
        DeltaOperations.ManualUpdate)
    }
    dlog.checkpoint(dlog.update())
    DeltaLog.clearCache()
    note(s"built the Delta table of $files files in ${(System.nanoTime() - t0) / 1000000} ms")
  }

  private val schema = StructType(Seq(
    StructField("timestamp", TimestampType),
    StructField("level", StringType),
    StructField("host", StringType),
    StructField("latency_ms", DoubleType),
    StructField("message", StringType),
    StructField("date", StringType)
  ))

  private lazy val ourMetadata = MetadataAction(
    id = UUID.randomUUID().toString,
    schemaString = schema.json,
    partitionColumns = Seq("date"),
    configuration = Map(SchemaHash.registryKey(DocMappingRef) ->
      """[{"name":"level","type":"text","tokenizer":"raw"}]"""),
    createdTime = Some(System.currentTimeMillis())
  )

  private def date(i: Int, conf: Conf): String = date(i % conf.partitions, conf.partitions)
  private def date(p: Int, partitions: Int): String =
    java.time.LocalDate.of(2024, 1, 1).plusDays(p.toLong % partitions).toString

  private def minValues(seed: Int) = Map(
    "timestamp" -> s"2024-01-01T00:${f"${seed % 60}%02d"}:00Z",
    "level" -> "DEBUG",
    "host" -> f"host-${seed % 997}%04d",
    "latency_ms" -> "0.125",
    "message" -> "Accepted password for user admin"
  )
  private def maxValues(seed: Int) = Map(
    "timestamp" -> s"2024-01-01T23:${f"${seed % 60}%02d"}:59Z",
    "level" -> "WARN",
    "host" -> f"host-${(seed % 997) + 3}%04d",
    "latency_ms" -> "4812.5",
    "message" -> "session opened for user root by "
  )

  private def ourAdd(id: String, day: String): AddAction = {
    val seed = id.hashCode & 0x7fffffff
    AddAction(
      path = s"date=$day/part-${UUID.randomUUID()}.split",
      partitionValues = Map("date" -> day),
      size = 40000000L + seed % 1000000,
      modificationTime = 1704067200000L + seed % 86400000,
      dataChange = true,
      minValues = Some(minValues(seed)),
      maxValues = Some(maxValues(seed)),
      numRecords = Some(250000L),
      hasFooterOffsets = true,
      footerStartOffset = Some(39000000L),
      footerEndOffset = Some(40000000L),
      docMappingRef = Some(DocMappingRef),
      uncompressedSizeBytes = Some(120000000L)
    )
  }

  private def deltaAdd(id: String, day: String): AddFile = {
    val seed = id.hashCode & 0x7fffffff
    def json(m: Map[String, String]) =
      m.map { case (k, v) => s""""$k":"$v"""" }.mkString("{", ",", "}")
    val stats = s"""{"numRecords":250000,"minValues":${json(minValues(seed))},""" +
      s""""maxValues":${json(maxValues(seed))},"nullCount":""" +
      StatsColumns.map(c => s""""$c":0""").mkString("{", ",", "}") + "}"
    AddFile(
      path = s"date=$day/part-${UUID.randomUUID()}.c000.zstd.parquet",
      partitionValues = Map("date" -> day),
      size = 40000000L + seed % 1000000,
      modificationTime = 1704067200000L + seed % 86400000,
      dataChange = true,
      stats = stats
    )
  }

  // --- timing and reporting --------------------------------------------------------------------

  private def timed(runs: Int)(body: => Unit): Seq[Double] = timedWithSetup(runs)(())(body)

  /**
   * One warm-up, then `runs` timed runs of `body`, each after an untimed `setup` and a full GC,
   * so that no run pays for garbage an earlier step (building a table) left behind.
   */
  private def timedWithSetup(runs: Int)(setup: => Unit)(body: => Unit): Seq[Double] =
    (0 to runs).map { _ =>
      setup
      System.gc()
      val t0 = System.nanoTime()
      body
      (System.nanoTime() - t0) / 1e6
    }.drop(1)

  private def report(conf: Conf, timings: Seq[Timing]): Unit = {
    val targets = Map(
      "snapshot load" -> 700.0,
      "incremental commit" -> 100.0,
      "compaction" -> 2000.0,
      "one-partition pruning" -> 100.0)
    val ops = timings.map(_.name).distinct
    val rows = ops.map { op =>
      val ours = timings.find(t => t.name == op && t.system == "IndexTables")
      val delta = timings.find(t => t.name == op && t.system == "Delta")
      (op, ours, delta)
    }
    val md = new StringBuilder
    md ++= s"# Transaction log at scale: IndexTables vs Delta Lake 3.3\n\n"
    md ++= s"${Runtime.getRuntime.availableProcessors()} cores, " +
      s"${Runtime.getRuntime.maxMemory() / (1 << 20)} MiB heap; median of ${conf.runs} runs " +
      "after one warm-up (min–max).\n\n"
    md ++= "| operation | IndexTables ms | Delta ms | ours / Delta | target | meets target |\n"
    md ++= "|---|---|---|---|---|---|\n"
    rows.foreach { case (op, o, d) =>
      def cell(t: Option[Timing]) =
        t.map(x => f"${x.median}%.1f (${x.min}%.1f–${x.max}%.1f)").getOrElse("–")
      val ratio = for (x <- o; y <- d) yield f"${x.median / y.median}%.3f"
      val meets = o.map(x =>
        if (x.median < targets(op) && d.forall(x.median <= _.median)) "yes"
        else "no").getOrElse("–")
      md ++= s"| $op (${o.map(_.detail).getOrElse("")}) | ${cell(o)} | ${cell(d)} | " +
        s"${ratio.getOrElse("–")} | < ${targets(op).toInt} ms | $meets |\n"
    }
    val json = timings.map { t =>
      s"""{"operation":"${t.name}","system":"${t.system}","detail":"${t.detail}",""" +
        f""""median_ms":${t.median}%.3f,"min_ms":${t.min}%.3f,"max_ms":${t.max}%.3f,""" +
        s""""runs_ms":[${t.runsMs.map(r => f"$r%.3f").mkString(",")}]}"""
    }.mkString(
      s"""{"cores":${Runtime.getRuntime.availableProcessors()},"runs":${conf.runs},""" +
        s""""live":${conf.live},"commit":${conf.commit},"compact":${conf.compact},""" +
        s""""prune":${conf.prune},"partitions":${conf.partitions},"results":[""",
      ",",
      "]}\n"
    )
    Files.write(new File(conf.out, "log-scale.json").toPath, json.getBytes(StandardCharsets.UTF_8))
    Files.write(
      new File(conf.out, "log-scale.md").toPath,
      md.toString.getBytes(StandardCharsets.UTF_8))
    println(md.toString)
  }

  private def note(msg: String): Unit = System.err.println(s"[log-scale] $msg")

  private def parse(args: List[String], c: Conf): Conf = args match {
    case Nil => c
    case "--live" :: v :: rest => parse(rest, c.copy(live = v.toInt))
    case "--commit" :: v :: rest => parse(rest, c.copy(commit = v.toInt))
    case "--compact" :: v :: rest => parse(rest, c.copy(compact = v.toInt))
    case "--prune" :: v :: rest => parse(rest, c.copy(prune = v.toInt))
    case "--partitions" :: v :: rest => parse(rest, c.copy(partitions = v.toInt))
    case "--runs" :: v :: rest => parse(rest, c.copy(runs = v.toInt))
    case "--out" :: v :: rest => parse(rest, c.copy(out = new File(v)))
    case "--no-delta" :: rest => parse(rest, c.copy(delta = false))
    case other => throw new IllegalArgumentException(
        s"unknown arguments: ${other.mkString(" ")} (see the LogScaleBench scaladoc)")
  }

  private def deleteRecursively(f: File): Unit = {
    if (f.isDirectory) Option(f.listFiles()).foreach(_.foreach(deleteRecursively))
    f.delete()
  }
}
