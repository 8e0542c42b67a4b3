package io.indextables.spark.storage

import java.io.{File, FileNotFoundException}
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.exceptions.IndexTablesException

class LogStoreSuite extends AnyFunSuite {
  import io.indextables.spark.transaction.TransactionTestUtils._

  private def checkPutIfAbsent(store: LogStore, dir: File): Unit = {
    val file = new Path(new Path(dir.toURI), "log/00000000000000000000.json")
    assert(!store.exists(file))
    assert(store.list(file.getParent).isEmpty)
    assert(store.putIfAbsent(file, "first".getBytes(UTF_8)))
    assert(!store.putIfAbsent(file, "second".getBytes(UTF_8)))
    assert(new String(store.read(file), UTF_8) === "first")
    assert(store.exists(file))
    assert(store.list(file.getParent).map(_.getName).filter(!_.startsWith(".")) ===
      Seq("00000000000000000000.json"))
    intercept[FileNotFoundException](store.read(new Path(file.getParent, "missing.json")))
  }

  test("factory picks the store by scheme: local, S3, Azure, else Hadoop") {
    assert(LogStore.forPath(new Path("/tmp/t"), hadoopConf) eq LocalLogStore)
    assert(LogStore.forPath(new Path("file:/tmp/t"), hadoopConf) eq LocalLogStore)
    Seq("s3://bucket/t", "s3a://bucket/t", "s3n://bucket/t").foreach { p =>
      assert(LogStore.forPath(new Path(p), hadoopConf).isInstanceOf[S3LogStore], p)
    }
    Seq("abfss", "abfs", "wasbs", "wasb").foreach { scheme =>
      val p = new Path(s"$scheme://c@account.dfs.core.windows.net/t")
      assert(LogStore.forPath(p, hadoopConf).isInstanceOf[AzureLogStore], p)
    }
    assert(LogStore.forPath(new Path("hdfs://nn:8020/t"), hadoopConf).isInstanceOf[HadoopLogStore])
    // One client per settings: equal settings share it, other credentials get their own.
    val a = LogStore.forPath(new Path("s3://one/t"), hadoopConf)
    assert(LogStore.forPath(new Path("s3://two/t"), hadoopConf) eq a)
    val other = new org.apache.hadoop.conf.Configuration(hadoopConf)
    other.set(IndexTablesConf.AwsAccessKey.key, "id")
    other.set(IndexTablesConf.AwsSecretKey.key, "never-printed")
    val b = LogStore.forPath(new Path("s3://one/t"), other).asInstanceOf[S3LogStore]
    assert(!(b eq a))
    assert(!b.settings.toString.contains("never-printed"))
  }

  test("the S3 and Azure stores share one bounded registry, least recently used dropped first") {
    def conf(set: (String, String)*) = {
      val c = new org.apache.hadoop.conf.Configuration(hadoopConf)
      set.foreach { case (k, v) => c.set(k, v) }
      c
    }
    val s3 = new Path("s3://bounded/t")
    val azure = new Path("abfss://c@bounded.dfs.core.windows.net/t")
    val first = conf(
      IndexTablesConf.AwsAccessKey.key -> "first",
      IndexTablesConf.AwsSecretKey.key -> "s")
    val a = LogStore.forPath(s3, first)
    assert(LogStore.forPath(s3, first) eq a)
    // As many other settings as the bound, half for each cloud: they fill one registry.
    (1 to LogStore.MaxSharedStores).foreach { i =>
      if (i % 2 == 0)
        LogStore.forPath(
          s3,
          conf(
            IndexTablesConf.AwsAccessKey.key -> s"k$i",
            IndexTablesConf.AwsSecretKey.key -> "s"))
      else LogStore.forPath(azure, conf(IndexTablesConf.AzureAccountName.key -> s"acct$i"))
      assert(LogStore.sharedStoreCount <= LogStore.MaxSharedStores)
    }
    assert(LogStore.sharedStoreCount === LogStore.MaxSharedStores)
    // The first settings were dropped: asking again makes a new store, which is then kept.
    val again = LogStore.forPath(s3, first)
    assert(!(again eq a))
    assert(LogStore.forPath(s3, first) eq again)
  }

  test("local split copies are bounded per JVM, across every directory they were put in") {
    val root = java.nio.file.Files.createTempDirectory("split-cache-bound").toFile
    def settings(dir: String) = LocalSplitCache.Settings(new File(root, dir), maxBytes = 2500L)
    def put(identity: String, dir: String): File =
      LocalSplitCache.get(s"bound-$identity-${root.getName}", settings(dir)) { target =>
        java.nio.file.Files.write(target.toPath, new Array[Byte](1000))
      }
    val a1 = put("a1", "a")
    a1.setLastModified(System.currentTimeMillis() - 60000)
    val a2 = put("a2", "a")
    assert(a1.isFile && a2.isFile, "2000 bytes fit")
    // A third copy in another directory: together 3000 bytes, so the oldest, in the first
    // directory, goes (each directory alone would still fit).
    val b1 = put("b1", "b")
    assert(b1.isFile && a2.isFile)
    assert(!a1.isFile, "the least recently used copy of the JVM was deleted")
    LocalSplitCache.clear()
  }

  test("storage settings and paths the stores cannot use fail with their error classes") {
    def refused(conf: org.apache.hadoop.conf.Configuration, path: String): IndexTablesException =
      intercept[IndexTablesException](LogStore.forPath(new Path(path), conf).exists(new Path(path)))
    val half = new org.apache.hadoop.conf.Configuration(hadoopConf)
    half.set(IndexTablesConf.AwsAccessKey.key, "id-only")
    val e1 = refused(half, "s3://half/t")
    assert(e1.getErrorClass === "INDEXTABLES_INCOMPLETE_CREDENTIALS" && e1.getSqlState === "22023")
    assert(e1.getMessage.contains(IndexTablesConf.AwsSecretKey.key) && !e1.getMessage.contains(
      "id-only"))
    val provider = new org.apache.hadoop.conf.Configuration(hadoopConf)
    provider.set(IndexTablesConf.AwsCredentialsProviderClass.key, "no.such.Provider")
    val e2 = refused(provider, "s3://provider/t")
    assert(e2.getErrorClass === "INDEXTABLES_INVALID_OPTION")
    assert(e2.getMessage.contains("no.such.Provider"))
    val e3 = refused(hadoopConf, "abfss://account.dfs.core.windows.net/t")
    assert(e3.getErrorClass === "INDEXTABLES_INVALID_STORAGE_PATH", e3.getMessage)
  }

  test("the stores read their settings through the registry: units, defaults, validation") {
    // Sizes with a unit, as the docs allow (raw parsing took only whole numbers).
    val conf = new org.apache.hadoop.conf.Configuration(false)
    conf.set(IndexTablesConf.S3PartSize.key, "100M")
    conf.set(IndexTablesConf.AzureBlockSize.key, "16M")
    conf.set(IndexTablesConf.SplitCacheMaxSize.key, "2G")
    val aws = AwsSettings(conf)
    assert(aws.partSize === (100L << 20))
    assert(aws.multipartThreshold === (100L << 20), "the threshold follows the part size")
    assert(aws.maxConcurrency === IndexTablesConf.S3MaxConcurrency.default)
    assert(AzureSettings(conf).blockSize === (16L << 20))
    assert(LocalSplitCache.Settings(conf).maxBytes === (2L << 30))
    // Nothing set: the registry's defaults.
    val empty = new org.apache.hadoop.conf.Configuration(false)
    assert(AwsSettings(empty).partSize === IndexTablesConf.S3PartSize.default)
    assert(AzureSettings(empty).blockSize === IndexTablesConf.AzureBlockSize.default)
    assert(LocalSplitCache.Settings(empty).maxBytes === IndexTablesConf.SplitCacheMaxSize.default)
    // Hadoop's own keys stay fallbacks of the plugin's.
    empty.set("fs.s3a.path.style.access", "true")
    empty.set("fs.s3a.endpoint", "minio:9000")
    assert(AwsSettings(empty).pathStyleAccess && AwsSettings(empty).endpoint.contains(
      "https://minio:9000"))
    empty.set(IndexTablesConf.AwsPathStyleAccess.key, "false")
    assert(!AwsSettings(empty).pathStyleAccess)
    // An invalid value names the key and what is expected, not a NumberFormatException.
    val bad = new org.apache.hadoop.conf.Configuration(false)
    bad.set(IndexTablesConf.S3MaxConcurrency.key, "many")
    val e = intercept[IndexTablesException](AwsSettings(bad))
    assert(e.getErrorClass === "INDEXTABLES_INVALID_OPTION", e.getMessage)
    assert(e.getMessage.contains(IndexTablesConf.S3MaxConcurrency.key), e.getMessage)
  }

  test("object-store paths qualify as they are, without a Hadoop file system") {
    assert(LogStore.qualify(
      new Path("s3://bucket/a/t/"),
      hadoopConf).toString === "s3://bucket/a/t")
    val azure = "abfss://c@acct.dfs.core.windows.net/t"
    assert(LogStore.qualify(new Path(azure), hadoopConf).toString === azure)
  }

  private def checkFiles(store: LogStore, dir: File): Unit = {
    val root = new Path(dir.toURI)
    val local = new File(dir, "local.bin")
    java.nio.file.Files.write(local.toPath, Array.tabulate[Byte](1000)(_.toByte))
    val dest = new Path(root, "table/p=1/part-0.split")
    store.upload(local, dest)
    assert(!local.exists())
    assert(store.status(dest).length === 1000L)
    assert(store.readRange(dest, 990, 10).toSeq === (990 until 1000).map(_.toByte))
    store.overwrite(new Path(root, "table/_log/x.json"), Array[Byte](1, 2))
    assert(store.listRecursively(new Path(root, "table")).map(f => (f.path.getName, f.length))
      .toSet === Set(("part-0.split", 1000L), ("x.json", 2L)))
    assert(store.listRecursively(new Path(root, "missing")).isEmpty)
    intercept[FileNotFoundException](store.status(new Path(root, "missing")))
  }

  test("local and Hadoop stores: upload, status, ranged reads, recursive listing") {
    withTempDir(dir => checkFiles(LocalLogStore, dir))
    withTempDir(dir => checkFiles(new HadoopLogStore(hadoopConf), dir))
  }

  test("local store: put-if-absent never overwrites, and leaves no temp files") {
    withTempDir { dir =>
      checkPutIfAbsent(LocalLogStore, dir)
      assert(new File(dir, "log").list().toSeq === Seq("00000000000000000000.json"))
    }
  }

  test("Hadoop store: put-if-absent never overwrites") {
    withTempDir(dir => checkPutIfAbsent(new HadoopLogStore(hadoopConf), dir))
  }

  private def checkOverwriteAndDirectories(store: LogStore, dir: File): Unit = {
    val log = new Path(new Path(dir.toURI), "log")
    val pointer = new Path(log, "_last_checkpoint")
    store.overwrite(pointer, "one".getBytes(UTF_8))
    store.overwrite(pointer, "two".getBytes(UTF_8))
    assert(new String(store.read(pointer), UTF_8) === "two")
    assert(store.modificationTime(pointer) > 0L)
    assert(store.putIfAbsent(
      new Path(log, "state-v00000000000000000001/_manifest.avro"),
      Array[Byte](1)))
    assert(store.listDirectories(log).map(_.getName) === Seq("state-v00000000000000000001"))
    assert(store.list(log).map(_.getName).filter(!_.startsWith(".")) === Seq("_last_checkpoint"))
    assert(store.delete(pointer) && !store.exists(pointer) && !store.delete(pointer))
    assert(store.listDirectories(new Path(log, "missing")).isEmpty)
  }

  test("local and Hadoop stores: overwrite replaces, directories list, files delete") {
    withTempDir(dir => checkOverwriteAndDirectories(LocalLogStore, dir))
    withTempDir(dir => checkOverwriteAndDirectories(new HadoopLogStore(hadoopConf), dir))
  }
}
