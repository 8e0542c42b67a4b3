package io.indextables.spark.transaction

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.TransactionLogException

/** The one resolver of paths taken from the log: inside the table root, or an error. */
class TablePathsSuite extends AnyFunSuite {

  private val local = new Path("file:/data/t")
  private val s3 = new Path("s3a://bucket/tables/t")

  private def refused(root: Path, path: String, action: String = "add"): String = {
    val e = intercept[TransactionLogException](TablePaths.resolve(root, path, action))
    assert(e.getErrorClass == "INDEXTABLES_PATH_OUTSIDE_TABLE")
    assert(e.getMessage.contains(s"'$path'") && e.getMessage.contains(s"$action action"))
    e.getMessage
  }

  test("relative paths resolve below the root") {
    assert(TablePaths.resolve(local, "part-1.split") == new Path("file:/data/t/part-1.split"))
    assert(TablePaths.resolve(local, "day=2024-01-01/p.split") ==
      new Path("file:/data/t/day=2024-01-01/p.split"))
    assert(TablePaths.resolve(s3, "a/b.split") == new Path("s3a://bucket/tables/t/a/b.split"))
  }

  test("absolute paths below the root are accepted, as relative ones") {
    assert(TablePaths.resolve(local, "/data/t/x/p.split") == new Path("file:/data/t/x/p.split"))
    assert(TablePaths.resolve(local, "file:/data/t/p.split") == new Path("file:/data/t/p.split"))
    assert(TablePaths.resolve(s3, "s3a://bucket/tables/t/p.split") ==
      new Path("s3a://bucket/tables/t/p.split"))
  }

  test("'..' segments are refused wherever they would lead") {
    assert(refused(local, "../other/p.split").contains("'..'"))
    refused(local, "a/../../p.split")
    refused(local, "a/../p.split", "remove")
    refused(local, "..\\p.split")
    refused(s3, "s3a://bucket/tables/t/../u/p.split", "mergeskip")
  }

  test("absolute paths outside the root are refused") {
    refused(local, "/data/other/p.split")
    refused(local, "/data/t2/p.split") // a sibling sharing the root's name as a prefix
    refused(local, "/data/t") // the root itself is no file of it
    refused(local, "s3a://bucket/tables/t/p.split") // another file system
    refused(s3, "s3a://other-bucket/tables/t/p.split")
    assert(refused(s3, "/tables/u/p.split").contains("absolute"))
    refused(local, "")
  }
}
