package io.indextables.spark.storage

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, StandardCopyOption}
import java.security.MessageDigest
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.metrics.StorageBytes

/**
 * Local copies of split files from stores that tantivy4java cannot read itself (Azure, HDFS),
 * one file per split identity, in one directory per JVM. A copy is fetched to a temporary name
 * and renamed into place, so a copy under its final name is always whole; concurrent readers of
 * one split wait for a single fetch. When this JVM's copies (in every directory it was given)
 * take more than the maximum, the least recently used are deleted (a searcher that has a deleted
 * copy open keeps reading it). The one cache of local copies of split and Parquet files.
 */
object LocalSplitCache {

  /** Where copies go, and the most bytes they may take together. */
  final case class Settings(directory: File, maxBytes: Long)

  object Settings {

    /** The settings `conf` carries (`cache.directoryPath`, `splitCache.maxSize`). */
    def apply(conf: Configuration): Settings = {
      val opts = StorageConf(conf)
      val dir = Some(opts.get(IndexTablesConf.SplitCacheDirectory)).filter(_.nonEmpty)
        .getOrElse(System.getProperty("java.io.tmpdir"))
      Settings(
        new File(dir, "indextables-split-cache"),
        opts.get(IndexTablesConf.SplitCacheMaxSize))
    }
  }

  private val locks = new ConcurrentHashMap[String, Object]()

  // Every directory this JVM has put copies in, for usage and flush.
  private val directories = ConcurrentHashMap.newKeySet[File]()

  /** The copies this JVM's directories hold: (count, bytes). */
  def usage(): (Int, Long) = {
    val files = copies()
    (files.size, files.map(_.length()).sum)
  }

  /**
   * Deletes every copy in this JVM's directories; (count, bytes) deleted. A searcher that has a
   * deleted copy open keeps reading it; the next read fetches the split again.
   */
  def clear(): (Int, Long) = {
    val deleted = copies().flatMap { f =>
      val len = f.length()
      locks.computeIfAbsent(f.getName, _ => new Object).synchronized {
        if (f.delete()) Some(len) else None
      }
    }
    (deleted.size, deleted.sum)
  }

  private def copies(): Seq[File] = directories.asScala.toSeq.flatMap { dir =>
    Option(dir.listFiles()).getOrElse(Array.empty[File])
      .filter(f => f.isFile && f.getName.endsWith(".split"))
  }

  private def nameOf(identity: String): String =
    MessageDigest.getInstance("SHA-256").digest(identity.getBytes(UTF_8))
      .map(b => f"${b & 0xff}%02x").mkString + ".split"

  /** The local copy of the split `identity`, fetched by `fetch` (into the given file) if absent. */
  def get(identity: String, settings: Settings)(fetch: File => Unit): File = {
    val name = nameOf(identity)
    val target = new File(settings.directory, name)
    val lock = locks.computeIfAbsent(name, _ => new Object)
    lock.synchronized {
      if (target.isFile) {
        target.setLastModified(System.currentTimeMillis())
      } else {
        Files.createDirectories(settings.directory.toPath)
        directories.add(settings.directory)
        val temp = new File(settings.directory, s".$name.${java.util.UUID.randomUUID()}.tmp")
        try {
          fetch(temp)
          StorageBytes.copied.addAndGet(temp.length())
          Files.move(temp.toPath, target.toPath, StandardCopyOption.ATOMIC_MOVE)
        } finally temp.delete()
        evict(settings, keep = target)
      }
    }
    target
  }

  /**
   * Deletes the least recently used copies, in every directory of this JVM, until together they
   * fit `settings`' maximum: the bound is per JVM, whichever directories reads were given.
   */
  private def evict(settings: Settings, keep: File): Unit = {
    val files = copies()
    var total = files.map(_.length()).sum
    // Each file's time read once: a copy touched by another task while the sort runs would
    // otherwise change its key mid-sort ("Comparison method violates its general contract").
    files.filter(_ != keep).map(f => f -> f.lastModified()).sortBy(_._2).map(_._1).foreach { f =>
      if (total > settings.maxBytes) {
        val len = f.length()
        if (f.delete()) total -= len
      }
    }
  }
}
