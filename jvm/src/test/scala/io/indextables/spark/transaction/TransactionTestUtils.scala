package io.indextables.spark.transaction

import java.io.File
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration

import io.indextables.spark.config.IndexTablesOptions

/** Helpers shared by the transaction suites: temp dirs and the location of shared fixtures. */
object TransactionTestUtils {

  val hadoopConf: Configuration = new Configuration()

  /** A log handle whose settings are `options` resolved over the defaults. */
  def logFor(path: String, conf: Configuration, options: Map[String, String]): TransactionLog =
    TransactionLog.forTable(path, conf, IndexTablesOptions(options).logSettings)

  def withTempDir[T](f: File => T): T = {
    val dir = Files.createTempDirectory("indextables-txlog-test").toFile
    try f(dir)
    finally deleteRecursively(dir)
  }

  def deleteRecursively(f: File): Unit = {
    Option(f.listFiles()).foreach(_.foreach(deleteRecursively))
    f.delete()
  }

  /** The repository root: the nearest ancestor of the working directory holding build.sbt. */
  lazy val repoRoot: Option[File] =
    Iterator.iterate(new File(System.getProperty("user.dir")).getAbsoluteFile)(_.getParentFile)
      .takeWhile(_ != null)
      .find(d => new File(d, "build.sbt").isFile && new File(d, "jvm").isDirectory)

  /** `../shared/data/interop/indextables-0.5.4` next to the repository, when present. */
  lazy val interopFixtures: Option[File] =
    repoRoot
      .map(r => new File(r.getParentFile, "shared/data/interop/indextables-0.5.4"))
      .filter(_.isDirectory)

  val Protocol: ProtocolAction = ProtocolAction(4, 4)

  def metadata(
      configuration: Map[String, String] = Map.empty,
      partitionColumns: Seq[String] = Nil): MetadataAction =
    MetadataAction(
      id = "550e8400-e29b-41d4-a716-446655440000",
      schemaString = """{"type":"struct","fields":[]}""",
      partitionColumns = partitionColumns,
      configuration = configuration,
      createdTime = Some(1704067200000L)
    )

  def add(path: String, size: Long = 100L): AddAction =
    AddAction(path, Map.empty, size, modificationTime = 1L, dataChange = true)
}
