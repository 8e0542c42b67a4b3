package io.indextables.spark.merge

import java.io.File
import java.net.InetAddress
import java.nio.file.Files
import java.util.UUID

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.commons.io.FileUtils
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.types.StructType
import org.slf4j.LoggerFactory

import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.stats.{CombinedStatistics, SplitCounts}
import io.indextables.spark.storage.{LocalSplitCache, LogStore, S3Access, S3LogStore, SplitFileGate}
import io.indextables.spark.transaction.TablePaths
import io.indextables.spark.transaction.AddAction
import io.indextables.spark.util.{NativeLibrary, SerializableHadoopConf}
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * What the executors need to merge the splits of one table. Serializable; built on the driver.
 *
 * @param tempDirectory where merged splits are made before upload (empty: java.io.tmpdir)
 */
final case class MergeTaskSpec(
    tablePath: String,
    hadoopConf: SerializableHadoopConf,
    tableSchema: StructType,
    partitionColumns: Seq[String],
    heapSize: Long,
    tempDirectory: String)

/** The end of one merge group on an executor. */
sealed trait MergeOutcome {
  def group: MergeGroup
}

object MergeOutcome {

  /** The merged split, already in the table (not yet in the log). */
  final case class Merged(group: MergeGroup, add: AddAction) extends MergeOutcome

  /** The merge failed; nothing of it is left in the table. */
  final case class Failed(group: MergeGroup, reason: String) extends MergeOutcome
}

/**
 * Merges one group of splits on an executor with tantivy4java's `QuickwitSplit.mergeSplits`:
 * sources are read where they are on the local disk and on S3 (by tantivy4java, with the
 * credentials the table's [[S3LogStore]] resolves), and copied through the table's [[LogStore]]
 * otherwise (Azure, HDFS); the merged split is made in a local temporary
 * directory and published under the partition's directory through the same store. Its add
 * action carries every source's documents (checked against their record counts), the combined
 * statistics, the split's footer offsets, the sources' doc mapping and tags, and
 * `dataChange=false`. Any failure deletes what the merge published and returns [[Failed]].
 */
object SplitMerger {

  NativeLibrary.ensureLoaded()

  private val logger = LoggerFactory.getLogger(getClass)

  private lazy val nodeId =
    Try(InetAddress.getLocalHost.getHostName).toOption.filter(_.nonEmpty).getOrElse("executor")

  def merge(spec: MergeTaskSpec, group: MergeGroup): MergeOutcome = {
    val conf = spec.hadoopConf.value
    val root = new Path(spec.tablePath)
    val store = LogStore.forPath(root, conf)
    val base =
      if (spec.tempDirectory.nonEmpty) new File(spec.tempDirectory)
      else new File(System.getProperty("java.io.tmpdir"))
    base.mkdirs()
    val work = Files.createTempDirectory(base.toPath, "indextables-merge-").toFile
    var published: Option[Path] = None
    // The sources' local copies stay until the merge is done: FLUSH DISK CACHE waits for it.
    val use = SplitFileGate.enter()
    try {
      // tantivy4java reads local files and S3 itself; other stores' splits are copied first.
      val inputs = group.sources.map { s =>
        val p = TablePaths.resolve(root, s.path)
        if (LogStore.isLocal(p)) new File(p.toUri.getPath).getPath
        else if (LogStore.isS3(p)) S3Access.url(p)
        else store.localCopy(p, s"$p#${s.size}", LocalSplitCache.Settings(conf)).getPath
      }
      val out = new File(work, s"merged-${UUID.randomUUID()}.split")
      val builder = QuickwitSplit.MergeConfig.builder()
        .indexUid("indextables")
        .sourceId("spark")
        .nodeId(nodeId)
        .heapSizeBytes(java.lang.Long.valueOf(spec.heapSize))
        .tempDirectoryPath(work.getAbsolutePath)
      store match {
        case s3: S3LogStore =>
          val a = S3Access(s3)
          builder.awsConfig(new QuickwitSplit.AwsConfig(
            a.accessKey,
            a.secretKey,
            a.sessionToken.orNull,
            a.region,
            a.endpoint.orNull,
            a.pathStyleAccess))
        case _ =>
      }
      val config = builder.build()
      val md = QuickwitSplit.mergeSplits(inputs.asJava, out.getAbsolutePath, config)
      val skipped = md.getSkippedSplitsDetailed.asScala
      if (skipped.nonEmpty) {
        return MergeOutcome.Failed(
          group,
          "tantivy4java skipped " + skipped.map(s => s"${s.getUrl} (${s.getReason})").mkString(
            ", "))
      }
      val expected = group.sources.flatMap(_.numRecords)
      if (expected.size == group.sources.size && expected.sum != md.getNumDocs) {
        return MergeOutcome.Failed(
          group,
          s"the merged split holds ${md.getNumDocs} documents, its sources ${expected.sum}")
      }
      val dir = PartitionValues.directory(spec.partitionColumns, group.partitionValues)
      val name = s"part-${UUID.randomUUID()}.split"
      val relative = if (dir.isEmpty) name else s"$dir/$name"
      val size = out.length()
      val dest = new Path(root, relative)
      published = Some(dest)
      store.upload(out, dest)
      val stats = CombinedStatistics.combine(
        spec.tableSchema,
        group.sources.map(s => (s.minValues, s.maxValues)))
      val tags = group.sources.flatMap(_.splitTags.getOrElse(Set.empty)).toSet
      val first = group.sources.head
      MergeOutcome.Merged(
        group,
        AddAction(
          path = relative,
          partitionValues = group.partitionValues,
          size = size,
          modificationTime = System.currentTimeMillis(),
          dataChange = false,
          stats = SplitCounts.combine(group.sources.map(_.stats)),
          minValues = stats.map(_._1),
          maxValues = stats.map(_._2),
          numRecords = Some(md.getNumDocs),
          hasFooterOffsets = true,
          footerStartOffset = Some(md.getFooterStartOffset),
          footerEndOffset = Some(md.getFooterEndOffset),
          splitTags = if (tags.isEmpty) None else Some(tags),
          numMergeOps = Some(group.sources.flatMap(_.numMergeOps).foldLeft(0)(math.max) + 1),
          docMappingRef = first.docMappingRef,
          docMappingJson = first.docMappingJson,
          // tantivy4java combines companion splits' manifests: the merged split indexes the
          // rows of every source's Parquet files, which stay where they are.
          companionSourceFiles =
            if (group.sources.exists(_.companionSourceFiles.isDefined))
              Some(group.sources.flatMap(_.companionSourceFiles.getOrElse(Nil)))
            else None,
          companionFastFieldMode = first.companionFastFieldMode,
          // Known only when every source recorded its files' sizes.
          companionSourceFileSizes =
            if (group.sources.forall(_.companionSourceFileSizes.isDefined))
              Some(group.sources.flatMap(_.companionSourceFileSizes.getOrElse(Nil)))
            else None
        )
      )
    } catch {
      case e: Exception =>
        logger.warn(s"Merge of ${group.sources.size} splits of ${spec.tablePath} failed", e)
        published.foreach(p => Try(store.delete(p)))
        MergeOutcome.Failed(group, Option(e.getMessage).getOrElse(e.getClass.getName))
    } finally {
      use.end()
      FileUtils.deleteQuietly(work)
    }
  }
}
