package io.indextables.spark.read

import scala.jdk.CollectionConverters._

import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.read.aggregate.DeletedDocValues
import io.indextables.spark.storage.{LocalSplitCache, SplitFileGate}
import io.indextables.tantivy4java.split.SplitCacheManager

/**
 * The caches a JVM keeps for reading splits, and what the cache commands do to them: the pooled
 * searchers ([[SplitSearchEngine]]), tantivy4java's in-memory caches (one per cache manager),
 * its L2 disk cache, the local copies of splits from Azure and HDFS ([[LocalSplitCache]]), and
 * the deleted docs' values of pushed aggregations (`aggregate.DeletedDocValues`). Each
 * operation acts on the JVM it runs in; the commands run it on every JVM of the application.
 */
object SplitCaches {

  /**
   * The L2 disk cache under tantivy's in-memory cache (tantivy4java's tiered cache): split
   * components fetched from object storage are kept on local disk, across queries and JVM
   * restarts. `maxBytes` 0 lets tantivy4java take two thirds of the disk's free space.
   */
  final case class DiskCache(
      path: String,
      maxBytes: Long,
      compression: String,
      minCompressBytes: Int,
      manifestSyncSeconds: Int) {

    def tieredConfig: SplitCacheManager.TieredCacheConfig = {
      val algorithm = SplitCacheManager.CompressionAlgorithm.valueOf(
        compression.toUpperCase(java.util.Locale.ROOT))
      new SplitCacheManager.TieredCacheConfig()
        .withDiskCachePath(path)
        .withMaxDiskSize(maxBytes)
        .withCompression(algorithm)
        .withMinCompressSize(minCompressBytes)
        .withManifestSyncInterval(manifestSyncSeconds)
    }

    /** Names these settings in a cache manager's name. */
    def identity: String =
      java.util.UUID.nameUUIDFromBytes(toString.getBytes(java.nio.charset.StandardCharsets.UTF_8))
        .toString.take(8)
  }

  /** The directory `auto` uses where a node has one: Databricks' and EMR's local NVMe disk. */
  val NvmeRoot = new java.io.File("/local_disk0")

  /** The disk cache the `spark.indextables.cache.disk.*` settings ask for, if any. Driver side. */
  def diskCache(opts: IndexTablesOptions): Option[DiskCache] = {
    val path = opts.get(IndexTablesConf.DiskCachePath)
    val enabled = opts.get(IndexTablesConf.DiskCacheEnabled) match {
      case "true" => true
      case "false" => false
      case _ => path.nonEmpty || NvmeRoot.isDirectory
    }
    if (!enabled) None
    else {
      val dir =
        if (path.nonEmpty) path
        else if (NvmeRoot.isDirectory) new java.io.File(NvmeRoot, "indextables_cache").getPath
        else
          new java.io.File(System.getProperty("java.io.tmpdir"), "indextables-disk-cache").getPath
      Some(DiskCache(
        dir,
        opts.get(IndexTablesConf.DiskCacheMaxSize),
        opts.get(IndexTablesConf.DiskCacheCompression),
        opts.get(IndexTablesConf.DiskCacheMinCompressSize).toInt,
        opts.get(IndexTablesConf.DiskCacheManifestSyncInterval)
      ))
    }
  }

  private def managers: Seq[SplitCacheManager] =
    SplitCacheManager.getAllInstances.values().asScala.toSeq

  /** What FLUSH SEARCHER CACHE freed in one JVM. */
  final case class SearcherFlush(searchersClosed: Int, cacheManagers: Int, bytesFreed: Long)

  /**
   * Closes the pooled searchers and the ranker's open splits ([[RankedSplits]]), and empties
   * every cache manager's in-memory caches and the deleted docs' values pushed aggregations
   * keep ([[DeletedDocValues]]).
   */
  def flushSearchers(): SearcherFlush = {
    val closed = SplitSearchEngine.closeIdle() + RankedSplits.closeIdle()
    DeletedDocValues.clear()
    val flushed = managers.map(_.flushAllCaches())
    SearcherFlush(closed, flushed.size, flushed.map(_.getBytesFreed).sum)
  }

  /** What FLUSH DISK CACHE removed in one JVM. */
  final case class DiskFlush(
      diskCaches: Int,
      diskCacheBytesFreed: Long,
      localCopiesDeleted: Int,
      localCopyBytesFreed: Long)

  /**
   * Empties the L2 disk caches of this JVM and deletes the local copies of Azure and HDFS splits;
   * the next read fetches again. tantivy4java 0.31.0 cannot evict a split from a live disk cache
   * (its `evictSplitFromDiskCache` leaves the files in place), so each disk-cached manager is
   * closed, its directory deleted, and the next read makes a new manager. That would pull the
   * files and the manager from under a read in progress, so the flush runs alone
   * ([[SplitFileGate.exclusive]]): it waits for this JVM's reads and merges of split files to
   * finish, and those that start meanwhile wait for it.
   *
   * Closing a manager can clear tantivy4java's process-wide caches (its native side clears the
   * split schemas, searcher contexts and the L1 cache when it counts its last manager closed),
   * while managers without a disk cache live on over that cleared state: a companion split
   * searched through one of them afterwards lost its Parquet fast fields (`Field "level" is not
   * configured as fast field`), and a term query found nothing. So the flush closes every
   * manager of the JVM, and the next read starts from a new one.
   */
  def flushDisk(): DiskFlush = SplitFileGate.exclusive {
    SplitSearchEngine.closeIdle()
    RankedSplits.closeIdle()
    // Every manager of the JVM is closed (see above); those with a disk cache lose its files.
    val flushed = managers.flatMap { m =>
      Option(diskCaches.remove(m)) match {
        case Some(disk) =>
          m.close()
          diskSplits.remove(m)
          Some(deleteTree(new java.io.File(disk.path)))
        case None =>
          scala.util.Try(m.close())
          None
      }
    }
    val (copies, copyBytes) = LocalSplitCache.clear()
    DiskFlush(flushed.size, flushed.sum, copies, copyBytes)
  }

  /** Deletes `dir`'s contents (not `dir`); the bytes of the files deleted. */
  private def deleteTree(dir: java.io.File): Long =
    Option(dir.listFiles()).getOrElse(Array.empty[java.io.File]).map { f =>
      if (f.isDirectory) { val n = deleteTree(f); f.delete(); n }
      else { val n = f.length(); if (f.delete()) n else 0L }
    }.sum

  /** One cache manager's L2 disk cache, as DESCRIBE DISK CACHE shows it. */
  final case class DiskReport(
      enabled: Boolean,
      path: Option[String],
      totalBytes: Long,
      maxBytes: Long,
      splits: Int,
      components: Int)

  /** The disk caches of this JVM's managers (one row with enabled = false when none has one). */
  def diskReports(): Seq[DiskReport] = {
    val reports = managers.filter(_.isDiskCacheEnabled).map { m =>
      val s = m.getDiskCacheStats
      DiskReport(
        enabled = true,
        diskPathOf(m),
        s.getTotalBytes,
        s.getMaxBytes,
        s.getSplitCount,
        s.getComponentCount)
    }
    if (reports.isEmpty) Seq(DiskReport(enabled = false, None, 0L, 0L, 0, 0)) else reports
  }

  // The disk cache each manager was made with (tantivy4java does not expose it).
  private val diskCaches = new java.util.concurrent.ConcurrentHashMap[SplitCacheManager, DiskCache]

  private[read] def register(manager: SplitCacheManager, disk: DiskCache): Unit =
    diskCaches.putIfAbsent(manager, disk)

  // The splits each disk-cached manager has opened searchers on in this JVM (what it may hold).
  private val diskSplits =
    new java.util.concurrent.ConcurrentHashMap[SplitCacheManager, java.util.Set[String]]

  private[read] def opened(manager: SplitCacheManager, where: String): Unit =
    if (diskCaches.containsKey(manager)) {
      diskSplits.computeIfAbsent(manager, _ => java.util.concurrent.ConcurrentHashMap.newKeySet())
        .add(where)
    }

  private def diskPathOf(m: SplitCacheManager): Option[String] =
    Option(diskCaches.get(m)).map(_.path)

  /** This JVM's reads from storage, as DESCRIBE STORAGE STATS shows them. */
  final case class StorageStats(
      objectStorageRequests: Long,
      objectStorageBytes: Long,
      memoryCacheBytes: Long,
      memoryCacheHits: Long,
      memoryCacheMisses: Long,
      localCopies: Int,
      localCopyBytes: Long)

  def storageStats(): StorageStats = {
    val stats = managers.map(_.getGlobalCacheStats)
    val (copies, copyBytes) = LocalSplitCache.usage()
    StorageStats(
      SplitCacheManager.getObjectStorageRequestCount,
      SplitCacheManager.getObjectStorageBytesFetched,
      stats.map(_.getCurrentSize).sum,
      stats.map(_.getTotalHits).sum,
      stats.map(_.getTotalMisses).sum,
      copies,
      copyBytes
    )
  }
}
