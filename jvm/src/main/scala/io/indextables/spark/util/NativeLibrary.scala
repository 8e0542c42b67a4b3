package io.indextables.spark.util

import java.io.File
import java.nio.file.{Files, Paths}

import scala.util.Try

import org.slf4j.LoggerFactory

/**
 * tantivy4java's native library, loaded once per JVM, without the copy it leaves behind.
 *
 * tantivy4java 0.31.0 loads `libtantivy4java.so` by copying it out of its JAR into a new file
 * `tantivy4java<random>libtantivy4java.so` under `java.io.tmpdir`, and never deletes that file:
 * every JVM that searches or writes a split (a driver, each executor, each restart) leaves about
 * 50 MB in the temporary directory. A long-lived cluster, or a test machine, fills its disk with
 * them (943 copies, 47 GB, here before this was found), and a full disk fails writes.
 *
 * Once the library is loaded, its file is no longer needed: on Linux the mapping of a deleted
 * file stays valid. [[ensureLoaded]] loads the library (initializing tantivy4java's `Tantivy`
 * class, which does the copy and the load) and deletes the copy this JVM mapped, found in
 * `/proc/self/maps`. Copies that other JVMs are loading are never touched: only a path this
 * process has mapped is deleted. Where `/proc` is absent (macOS, Windows) nothing is deleted.
 */
object NativeLibrary {
  private val logger = LoggerFactory.getLogger(getClass)

  /** The JAR resource's name, as tantivy4java's loader names its copy on Linux. */
  private val LibraryName = "libtantivy4java.so"
  private val CopyPrefix = "tantivy4java"

  private lazy val copiesRemoved: Int = {
    Class.forName("io.indextables.tantivy4java.core.Tantivy", true, getClass.getClassLoader)
    // A failed clean-up (an unreadable temporary directory) must never fail the read or write.
    Try(removeLoadedCopies(new File("/proc/self/maps"))).getOrElse(0)
  }

  /**
   * Loads tantivy4java's native library in this JVM (once) and deletes the temporary copy it
   * was loaded from. Cheap after the first call; call it where this JVM first needs tantivy4java.
   */
  def ensureLoaded(): Unit = copiesRemoved

  /**
   * Deletes the copies of the library the process whose memory map `maps` lists has loaded
   * from the temporary directory (a mapped file already deleted is listed with a " (deleted)"
   * suffix, and so skipped); how many it deleted.
   */
  private[util] def removeLoadedCopies(maps: File): Int =
    if (!maps.canRead) 0
    else {
      val tmp = new File(System.getProperty("java.io.tmpdir")).getCanonicalFile
      val source = scala.io.Source.fromFile(maps, "UTF-8")
      val mapped =
        try source.getLines().map(_.trim).filter(l => l.endsWith(LibraryName) && l.contains('/'))
            .map(l => new File(l.substring(l.indexOf('/')))).toList.distinct
        finally source.close()
      val copies = mapped.filter { f =>
        f.getName.startsWith(CopyPrefix) && f.getName != LibraryName &&
        f.getParentFile.getCanonicalFile == tmp
      }
      copies.count { f =>
        val deleted = Try(Files.deleteIfExists(Paths.get(f.getPath))).getOrElse(false)
        if (deleted) logger.debug(s"Deleted tantivy4java's temporary copy of its library: $f")
        deleted
      }
    }
}
