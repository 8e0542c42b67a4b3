package io.indextables.spark.read

import scala.jdk.CollectionConverters._

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.storage.{LocalSplitCache, LogStore, S3Access, S3LogStore}
import io.indextables.spark.transaction.{TableLayout, TablePaths}
import io.indextables.spark.util.{BoundedCache, NativeLibrary}
import io.indextables.tantivy4java.split.merge.QuickwitSplit
import io.indextables.tantivy4java.split.{SplitCacheManager, SplitSearcher}

/**
 * Opens tantivy4java split searchers, and keeps them for later reads. The cache manager is
 * process-wide (tantivy4java keeps one per configuration). A searcher is built from the footer
 * offsets recorded in the log, as tantivy4java requires; building one costs milliseconds, more
 * than searching a small split, so a reader borrows a searcher of the same split file (the same
 * path, length, modification time and footer) left by an earlier read, and gives it back when
 * done. A searcher is used by one reader at a time; at most [[MaxIdle]] wait between reads.
 */
object SplitSearchEngine {
  val CacheName = "indextables"

  NativeLibrary.ensureLoaded()

  /** Searchers kept open between reads in one JVM, least recently used closed first. */
  val MaxIdle = 256

  /**
   * The process-wide cache manager for these settings. tantivy4java keeps one manager per
   * configuration (its key includes the credentials, so new credentials, such as a refreshed
   * session token, get a manager of their own at once). `s3` is how tantivy4java reaches S3 for
   * splits there; `diskCache` adds the persistent L2 disk tier under the in-memory cache. The
   * leaf-search cache is not the manager's to turn off (see [[LeafCacheBypass]]).
   */
  def cacheManager(
      maxSize: Long,
      s3: Option[S3Access] = None,
      diskCache: Option[SplitCaches.DiskCache] = None): SplitCacheManager = {
    // tantivy4java's manager key leaves the disk tier out: a disk cache gets a name of its own.
    val name = CacheName + diskCache.map(d => s"-l2-${d.identity}").getOrElse("")
    val config = new SplitCacheManager.CacheConfig(name).withMaxCacheSize(maxSize)
    diskCache.foreach(d => config.withTieredCache(d.tieredConfig))
    s3.foreach { a =>
      a.sessionToken match {
        case Some(t) => config.withAwsCredentials(a.accessKey, a.secretKey, t)
        case None => config.withAwsCredentials(a.accessKey, a.secretKey)
      }
      config.withAwsRegion(a.region)
      a.endpoint.foreach(config.withAwsEndpoint)
      if (a.pathStyleAccess) config.withAwsPathStyleAccess(true)
    }
    val manager = SplitCacheManager.getInstance(config)
    diskCache.foreach(SplitCaches.register(manager, _))
    manager
  }

  /**
   * A split file after [[SplitFileCheck]]: `where` tantivy4java reads it (a local path, or an
   * `s3://` URL), `identity`, what identifies its content (a committed split never changes under
   * one identity), and for S3 the access tantivy4java reads it with.
   */
  final case class CheckedSplit(where: String, identity: String, s3: Option[S3Access] = None)

  /**
   * Checks that the split's file exists and is whole; where and what it is. Splits on stores
   * that tantivy4java cannot read itself (Azure, HDFS) are copied to the local split cache.
   */
  def check(plan: ReadPlan, split: SplitInputPartition): CheckedSplit = {
    val conf = plan.hadoopConf.value
    val p = TablePaths.resolve(plan.root, split.path)
    val store = LogStore.forPath(p, conf)
    val identity =
      SplitFileCheck.verify(store, p, split.size, split.footerStartOffset, split.footerEndOffset)
    try {
      if (LogStore.isLocal(p)) CheckedSplit(new java.io.File(p.toUri.getPath).getPath, identity)
      else if (LogStore.isS3(p)) {
        CheckedSplit(S3Access.url(p), identity, Some(S3Access(store.asInstanceOf[S3LogStore])))
      } else {
        val local = store.localCopy(p, identity, LocalSplitCache.Settings(conf))
        CheckedSplit(local.getPath, identity)
      }
    } catch {
      case e: IndexTablesException => throw e
      case e: Exception => throw IndexTablesErrors.splitReadFailed(p.toString, e)
    }
  }

  /**
   * The directory tantivy4java finds a companion split's Parquet files under: the root itself on
   * local disk and S3 (read there by tantivy4java, with the cache manager's credentials); for
   * other stores (Azure, HDFS), which tantivy4java does not reach, a local directory mirroring
   * the root, holding links to local copies of the split's files. Each file whose size the log
   * recorded is checked against it first: a file changed after it was indexed is refused.
   */
  def parquetRootFor(plan: ReadPlan, split: SplitInputPartition): String = {
    val conf = plan.hadoopConf.value
    val root = plan.parquetRootPath
    // A file's status, refused when missing or no longer of the size it was indexed at.
    def checkedStatus(f: String) = {
      val p = TablePaths.resolve(root, f)
      val st =
        try LogStore.forPath(p, conf).status(p)
        catch {
          case e: Exception =>
            throw IndexTablesErrors.companionFileUnreadable(p.toString, split.path, e)
        }
      split.companionSizes.get(f).filter(_ != st.length).foreach { r =>
        throw IndexTablesErrors.companionFileChanged(p.toString, split.path, r, st.length)
      }
      (p, st)
    }
    if (LogStore.isLocal(root) || LogStore.isS3(root))
      split.companionSizes.keys.foreach(checkedStatus)
    // The directory the split's manifest names its files under.
    val dir =
      if (!plan.parquetPathsFromDirectory) ""
      else TableLayout.directoryOf(split.companionFiles).getOrElse(
        throw IndexTablesErrors.companionFilesScattered(split.path, split.companionFiles))
    val under = if (dir.isEmpty) root else TablePaths.resolve(root, dir)
    if (LogStore.isLocal(root)) new java.io.File(under.toUri.getPath).getPath
    else if (LogStore.isS3(root)) S3Access.url(under)
    else {
      val settings = LocalSplitCache.Settings(conf)
      val mirror = new java.io.File(
        settings.directory,
        "companion-" + Integer.toHexString(root.toString.hashCode))
      split.companionFiles.foreach { f =>
        val link = new java.io.File(mirror, f).toPath
        // A link whose copy was evicted dangles: exists follows it, so it is made anew.
        if (!java.nio.file.Files.exists(link)) {
          val (p, st) = checkedStatus(f)
          val copy =
            try LogStore.forPath(
                p,
                conf).localCopy(p, s"$p|${st.length}|${st.modificationTime}", settings)
            catch {
              case e: Exception =>
                throw IndexTablesErrors.companionFileUnreadable(p.toString, split.path, e)
            }
          java.nio.file.Files.createDirectories(link.getParent)
          java.nio.file.Files.deleteIfExists(link)
          try java.nio.file.Files.createSymbolicLink(link, copy.toPath)
          catch { case _: java.nio.file.FileAlreadyExistsException => } // another task's
        }
      }
      new java.io.File(mirror, dir).getPath
    }
  }

  // Idle searchers by pool key, least recently used first; guarded by itself.
  private val idle = new java.util.LinkedHashMap[String, List[SplitSearcher]](64, 0.75f, true)
  private var idleCount = 0

  private def poolKey(checked: CheckedSplit, split: SplitInputPartition, plan: ReadPlan) =
    s"${checked.identity}|${plan.cacheMaxSize}|${plan.diskCache}|" +
      s"${checked.s3.map(_.fingerprint).getOrElse("")}|" +
      split.docMappingJson.map(_.hashCode).getOrElse(0) +
      (if (split.companion) s"|${plan.parquetRoot.getOrElse("")}" else "")

  /** A searcher of the checked split: one left by an earlier read, or a new one. */
  def borrow(checked: CheckedSplit, split: SplitInputPartition, plan: ReadPlan): SplitSearcher = {
    val key = poolKey(checked, split, plan)
    val kept = idle.synchronized {
      Option(idle.get(key)).flatMap {
        case s :: rest =>
          if (rest.isEmpty) idle.remove(key) else idle.put(key, rest)
          idleCount -= 1
          Some(s)
        case Nil => None
      }
    }
    kept.getOrElse(open(checked, split, plan))
  }

  /**
   * Returns a searcher a reader is done with, to be borrowed again; the least recently used
   * ones are closed past [[MaxIdle]]. A reader that failed closes its searcher instead.
   */
  def giveBack(
      checked: CheckedSplit,
      split: SplitInputPartition,
      plan: ReadPlan,
      searcher: SplitSearcher): Unit = {
    val key = poolKey(checked, split, plan)
    val evicted = idle.synchronized {
      idle.put(key, searcher :: Option(idle.get(key)).getOrElse(Nil))
      idleCount += 1
      val out = List.newBuilder[SplitSearcher]
      val it = idle.entrySet().iterator()
      while (idleCount > MaxIdle && it.hasNext) {
        val e = it.next()
        out ++= e.getValue
        idleCount -= e.getValue.size
        it.remove()
      }
      out.result()
    }
    evicted.foreach(s => scala.util.Try(s.close()))
  }

  /** Closes every idle searcher of this JVM; how many. The next read opens new ones. */
  def closeIdle(): Int = {
    val closed = idle.synchronized {
      val all = idle.values().asScala.flatten.toList
      idle.clear()
      idleCount = 0
      all
    }
    closed.foreach(s => scala.util.Try(s.close()))
    closed.size
  }

  /** A new searcher on the checked split. */
  /**
   * What a searcher opens a split with: its id, documents, footer offsets (from the log: the
   * searcher reads no other metadata) and doc mapping; the rest are Quickwit's placeholders.
   */
  def splitMetadata(
      splitId: String,
      numDocs: Long,
      footerStart: Long,
      footerEnd: Long,
      docMappingJson: String): QuickwitSplit.SplitMetadata =
    new QuickwitSplit.SplitMetadata(
      splitId,
      "indextables",
      0L,
      "spark",
      "node",
      numDocs,
      0L,
      null,
      null,
      0L,
      "Mature",
      java.util.Collections.emptySet[String](),
      footerStart,
      footerEnd,
      0L,
      0,
      "default",
      docMappingJson,
      java.util.Collections.emptyList[QuickwitSplit.SkippedSplit]()
    )

  def open(checked: CheckedSplit, split: SplitInputPartition, plan: ReadPlan): SplitSearcher = {
    val where = checked.where
    val metadata = splitMetadata(
      splitIdOf(split.path),
      split.numRecords.getOrElse(0L),
      split.footerStartOffset,
      split.footerEndOffset,
      split.docMappingJson.orNull)
    // Rows of a companion split are read from its Parquet files, under their root; a file
    // missing or changed fails here, naming the file.
    val parquetRoot = if (split.companion) Some(parquetRootFor(plan, split)) else None
    try {
      val manager = cacheManager(plan.cacheMaxSize, checked.s3, plan.diskCache)
      SplitCaches.opened(manager, where)
      parquetRoot match {
        case Some(root) => manager.createSplitSearcher(where, metadata, root)
        case None => manager.createSplitSearcher(where, metadata)
      }
    } catch { case e: Exception => throw IndexTablesErrors.splitReadFailed(where, e) }
  }

  // The answers of singleSegmentDocs by split identity (they never change for one identity).
  private val singleSegment = new BoundedCache[String, Option[Long]](100000)

  /**
   * For a local split (checked by [[check]]) that holds exactly one segment, no deleted
   * documents and the record count the log gives it: that count. Its documents are then
   * numbers 0 until n of segment 0 (tantivy numbers a segment's documents densely), so a read
   * of every document needs no search. None whenever any of that is not certain.
   */
  def singleSegmentDocs(checked: CheckedSplit, split: SplitInputPartition): Option[Long] =
    if (checked.where.contains("://") || split.numRecords.isEmpty) None
    else
      singleSegment.getOrElseUpdate(s"${checked.identity}|${split.numRecords}")(
        countSingleSegment(checked.where, split))

  private def countSingleSegment(where: String, split: SplitInputPartition): Option[Long] =
    try {
      val files = QuickwitSplit.listSplitFiles(where).asScala
      val segments = files.flatMap(f => SegmentFile.findFirstMatchIn(f).map(_.group(1))).toSet
      val deletes = files.exists(_.endsWith(".del"))
      lazy val docs = QuickwitSplit.readSplitMetadata(where).getNumDocs
      if (segments.size == 1 && !deletes && split.numRecords.contains(docs)) split.numRecords
      else None
    } catch { case _: Exception => None }

  private val SegmentFile = "^([0-9a-f]{32})\\.".r

  private def splitIdOf(path: String): String = {
    val name = path.substring(path.lastIndexOf('/') + 1)
    name.stripSuffix(".split").stripPrefix("part-")
  }
}
