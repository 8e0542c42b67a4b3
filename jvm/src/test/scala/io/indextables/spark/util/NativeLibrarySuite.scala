package io.indextables.spark.util

import java.io.File
import java.nio.file.Files

import scala.io.Source

import org.scalatest.funsuite.AnyFunSuite

class NativeLibrarySuite extends AnyFunSuite {

  private val tmp = new File(System.getProperty("java.io.tmpdir"))

  private def mapsListing(lines: String*): File = {
    val maps = File.createTempFile("maps", ".txt")
    maps.deleteOnExit()
    Files.write(maps.toPath, lines.mkString("\n").getBytes("UTF-8"))
    maps
  }

  private def line(path: String): String =
    s"7f3c2a000000-7f3c2a400000 r-xp 00000000 fd:00 1234567                    $path"

  test("this JVM loads tantivy4java and keeps no file of its library in the temporary directory") {
    NativeLibrary.ensureLoaded()
    NativeLibrary.ensureLoaded() // once per JVM: a second call does nothing
    val maps = Source.fromFile("/proc/self/maps", "UTF-8")
    val mapped =
      try maps.getLines().filter(_.contains("libtantivy4java.so")).toList
      finally maps.close()
    assert(mapped.nonEmpty, "the native library is not loaded")
    // The mapping stays; its file is gone.
    assert(mapped.forall(_.endsWith("(deleted)")), mapped.mkString("\n"))
  }

  test("only the copies this process mapped in the temporary directory are deleted") {
    val mine = File.createTempFile("tantivy4java", "libtantivy4java.so")
    val another = File.createTempFile("tantivy4java", "libtantivy4java.so") // another JVM's
    val outside = Files.createTempDirectory("lib").toFile
    val installed = new File(outside, "libtantivy4java.so")
    val elsewhere = new File(outside, "tantivy4java123libtantivy4java.so")
    Seq(installed, elsewhere).foreach(f => Files.write(f.toPath, Array[Byte](1)))
    try {
      val maps = mapsListing(
        line(mine.getPath),
        line(mine.getPath), // a library maps several segments
        line(installed.getPath),
        line(elsewhere.getPath),
        line(new File(tmp, "tantivy4java9libtantivy4java.so").getPath + " (deleted)"),
        "7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0                          [stack]"
      )
      assert(NativeLibrary.removeLoadedCopies(maps) == 1)
      assert(!mine.exists())
      assert(another.exists() && installed.exists() && elsewhere.exists())
      assert(NativeLibrary.removeLoadedCopies(new File(outside, "no-such-maps")) == 0)
    } finally {
      Seq(mine, another, installed, elsewhere).foreach(_.delete())
      outside.delete()
    }
  }
}
