package io.indextables.spark.transaction.state

import java.io.FileNotFoundException
import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.storage.LogStore

/**
 * The live files of an Avro state: its manifest, and every entry of the manifests it references
 * with the state's tombstones applied. `entryPaths` holds the paths of all entries, tombstoned
 * or not, which an incremental writer needs to know. Immutable.
 */
final case class AvroState(
    stateDir: String,
    manifest: StateManifest,
    live: Seq[FileEntry],
    removedByTombstone: Set[String]) {

  /** Paths of every entry read, live or tombstoned (built on first use). */
  lazy val entryPaths: Set[String] = live.iterator.map(_.add.path).toSet ++ removedByTombstone
}

/**
 * Reads `state-v<version>/_manifest.avro` and the manifests it references, on the driver.
 * Stateless; every failure is a [[io.indextables.spark.exceptions.TransactionLogException]]
 * naming the file at fault.
 */
object AvroStateReader {

  val ManifestFileName: String = "_manifest.avro"
  val SharedManifestDir: String = "manifests"

  /**
   * The file a manifest path of a state refers to, by protocol.md's three forms: shared
   * (`manifests/...`) and normalised legacy (`state-v.../...`) paths are relative to the log
   * root, any other path to the state directory.
   */
  def resolveManifestPath(logPath: Path, stateDir: String, path: String): Path =
    if (path.startsWith(SharedManifestDir + "/") || path.startsWith("state-v")) {
      new Path(logPath, path)
    } else {
      new Path(new Path(logPath, stateDir), path)
    }

  def stateManifestPath(logPath: Path, stateDir: String): Path =
    new Path(new Path(logPath, stateDir), ManifestFileName)

  /** Reads only the state manifest (no entries). */
  def readManifest(store: LogStore, logPath: Path, stateDir: String): StateManifest = {
    val file = stateManifestPath(logPath, stateDir)
    val bytes = readFile(store, file, "the state manifest is missing")
    try AvroStateCodec.decodeStateManifest(bytes)
    catch {
      case NonFatal(e) =>
        throw IndexTablesErrors.unreadableVersionFile(
          file,
          s"not a readable Avro state manifest (${e.getMessage})",
          e)
    }
  }

  /**
   * Reads the state in `stateDir` with `parallelism` concurrent manifest reads. Entries of later
   * manifests replace entries of the same path in earlier ones.
   */
  def read(store: LogStore, logPath: Path, stateDir: String, parallelism: Int): AvroState =
    readEntries(
      store,
      logPath,
      stateDir,
      readManifest(store, logPath, stateDir),
      parallelism,
      _ => true)

  /**
   * The entries of the manifests of `manifest` that `keep` accepts, with the state's tombstones
   * applied; `entryPaths` then holds only the paths of those manifests. With `keepPartition`,
   * only entries whose partition values it accepts, and with `keepBounds` only the blocks whose
   * partition bounds it accepts (see [[AvroStateCodec.decodeFileEntries]]).
   */
  def readEntries(
      store: LogStore,
      logPath: Path,
      stateDir: String,
      manifest: StateManifest,
      parallelism: Int,
      keep: ManifestInfo => Boolean,
      keepPartition: Map[String, String] => Boolean = null,
      keepBounds: Map[String, PartitionBounds] => Boolean = null): AvroState = {
    val files = manifest.manifests.filter(keep)
      .map(m => resolveManifestPath(logPath, stateDir, m.path))
    val perManifest = mapInParallel(files, parallelism)(f =>
      readEntries(store, f, keepPartition, keepBounds))
    val byPath = new java.util.LinkedHashMap[String, FileEntry](
      math.max(16, (perManifest.iterator.map(_.size).sum * 4L / 3 + 1).toInt))
    perManifest.foreach(_.foreach(e => byPath.put(e.add.path, e)))
    val removed = manifest.tombstones.iterator.filter(byPath.containsKey).toSet
    manifest.tombstones.foreach(byPath.remove)
    AvroState(stateDir, manifest, byPath.values.asScala.toVector, removed)
  }

  def readEntries(store: LogStore, file: Path): Seq[FileEntry] =
    readEntries(store, file, null, null)

  /**
   * The entries of one manifest whose partition values `keepPartition` accepts (all if null);
   * blocks whose partition bounds `keepBounds` rejects are not read (all are if null).
   */
  def readEntries(
      store: LogStore,
      file: Path,
      keepPartition: Map[String, String] => Boolean,
      keepBounds: Map[String, PartitionBounds] => Boolean): Seq[FileEntry] = {
    val bytes = readFile(store, file, "a manifest that the state references is missing")
    try AvroStateCodec.decodeFileEntries(bytes, keepPartition, keepBounds)
    catch {
      case NonFatal(e) =>
        throw IndexTablesErrors.unreadableVersionFile(
          file,
          s"not a readable Avro manifest (${e.getMessage})",
          e)
    }
  }

  private def readFile(store: LogStore, file: Path, missing: String): Array[Byte] =
    try store.read(file)
    catch {
      case e: FileNotFoundException =>
        throw IndexTablesErrors.unreadableVersionFile(file, missing, e)
    }

  private def mapInParallel[A, B](items: Seq[A], parallelism: Int)(f: A => B): Seq[B] =
    if (items.size <= 1 || parallelism <= 1) items.map(f)
    else {
      val pool = Executors.newFixedThreadPool(math.min(parallelism, items.size))
      try {
        val futures = items.map(i => pool.submit(new Callable[B] { def call(): B = f(i) }))
        futures.map { fu =>
          try fu.get()
          catch { case e: java.util.concurrent.ExecutionException => throw e.getCause }
        }
      } finally {
        pool.shutdownNow()
        pool.awaitTermination(10, TimeUnit.SECONDS)
      }
    }

}
