package io.indextables.spark.schema

/**
 * tantivy's `default` tokenizer drops tokens longer than 255 bytes, so a word inside such a run
 * is not in the index. A split holding such a value is tagged, and reads do not use token
 * queries on it (they would miss rows). Token runs are measured conservatively: only ASCII
 * characters other than letters and digits end a run, so every real token lies inside one.
 */
object TokenLimit {
  val MaxTokenBytes: Int = 255
  val LongTokensTag: String = "indextables:text-tokens-over-255-bytes"

  def mayDropTokens(text: String): Boolean = {
    var run = 0
    var i = 0
    while (i < text.length) {
      val c = text.charAt(i)
      if (c < 128 && !Character.isLetterOrDigit(c)) run = 0
      else {
        run += (if (c < 0x80) 1 else if (c < 0x800) 2 else 3)
        if (run > MaxTokenBytes) return true
      }
      i += 1
    }
    false
  }
}
