package io.indextables.spark.transaction

import java.io.{File, FileNotFoundException}
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

class LogStoreSuite extends AnyFunSuite {
  import TransactionTestUtils._

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

  test("factory picks the local store for file: and scheme-less paths, Hadoop otherwise") {
    assert(LogStore.forPath(new Path("/tmp/t"), hadoopConf) eq LocalLogStore)
    assert(LogStore.forPath(new Path("file:/tmp/t"), hadoopConf) eq LocalLogStore)
    assert(LogStore.forPath(new Path("s3a://bucket/t"), hadoopConf).isInstanceOf[HadoopLogStore])
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
