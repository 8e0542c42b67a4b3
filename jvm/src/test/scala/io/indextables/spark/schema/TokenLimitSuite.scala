package io.indextables.spark.schema

import org.scalatest.funsuite.AnyFunSuite

class TokenLimitSuite extends AnyFunSuite {
  import TokenLimit.{mayDropTokens, MaxTokenBytes}

  test("a run of exactly 255 ASCII letters or digits keeps every token") {
    assert(!mayDropTokens("a" * MaxTokenBytes))
    assert(!mayDropTokens("7" * MaxTokenBytes))
  }

  test("a run of 256 ASCII letters or digits may drop a token") {
    assert(mayDropTokens("a" * (MaxTokenBytes + 1)))
    assert(mayDropTokens("x y " + "ab12" * 64 + " z"))
  }

  test("ASCII separators reset the run, so many short words never trip the limit") {
    assert(!mayDropTokens(("a" * 200 + " ") * 50))
    Seq(" ", "-", ".", ",", "_", "/", "\t", "\n").foreach { sep =>
      assert(!mayDropTokens("a" * 200 + sep + "b" * 200), s"separator ${sep.map(_.toInt)}")
    }
  }

  test("multi-byte characters count their UTF-8 bytes: 128 two-byte letters exceed 255 bytes") {
    assert(!mayDropTokens("é" * 127)) // 254 bytes
    assert(mayDropTokens("é" * 128)) // 256 bytes
  }

  test("three-byte characters: 85 fit in 255 bytes, 86 do not") {
    assert(!mayDropTokens("中" * 85)) // 255 bytes
    assert(mayDropTokens("中" * 86)) // 258 bytes
  }

  test("non-ASCII characters never end a run, even when they are punctuation") {
    // U+00A0 (no-break space) and U+2014 (em dash) are not ASCII: measured conservatively.
    assert(mayDropTokens("a" * 200 + "\u00a0" + "b" * 100))
    assert(mayDropTokens("a" * 200 + "\u2014" + "b" * 100))
  }

  test("mixed ASCII and multi-byte characters add up within one run") {
    assert(!mayDropTokens("a" * 253 + "é")) // 255 bytes
    assert(mayDropTokens("a" * 254 + "é")) // 256 bytes
  }

  test("empty and short strings keep every token") {
    assert(!mayDropTokens(""))
    assert(!mayDropTokens("hello world"))
  }
}
