package io.indextables.spark.read

import io.indextables.spark.IndexTablesTestBase
import io.indextables.tantivy4java.core.FieldInfo

/**
 * The indexing options reach the split itself: what tantivy4java's `SplitSearcher.getSchema()`
 * reports of each field (stored, indexed, fast, tokenizer) is what the options asked.
 */
class SplitSchemaOptionsSuite extends IndexTablesTestBase {

  private def fieldsOf(path: String): Map[String, FieldInfo] = {
    val (plan, split) = SplitFixtures.planAndSplit(spark, path)
    val searcher = SplitSearchEngine.borrow(SplitSearchEngine.check(plan, split), split, plan)
    try {
      val schema = searcher.getSchema
      try {
        import scala.jdk.CollectionConverters._
        schema.getAllFieldInfo.asScala.map(f => f.getName -> f).toMap
      } finally schema.close()
    } finally searcher.close()
  }

  test("fast, non-fast, store-only, index-only and tokenizer options shape the split's fields") {
    val path = tablePath("options")
    spark.range(20).selectExpr(
      "id",
      "cast(id as string) as fastText",
      "cast(id as string) as plain",
      "cast(id as string) as kept",
      "cast(id as string) as hidden",
      "concat('word ', cast(id as string)) as stemmed",
      "cast(id as double) as score"
    ).coalesce(1).write.format("indextables")
      .option("spark.indextables.indexing.typemap.text", "fastText")
      .option("spark.indextables.indexing.fastfields", "fastText")
      .option("spark.indextables.indexing.nonfastfields", "plain,score")
      .option("spark.indextables.indexing.storeonlyfields", "kept")
      .option("spark.indextables.indexing.indexonlyfields", "hidden")
      .option("spark.indextables.indexing.tokenizer.stemmed", "en_stem")
      .save(path)
    val f = fieldsOf(path)
    def flags(name: String) = (f(name).isStored, f(name).isIndexed, f(name).isFast)
    assert(flags("fastText") === ((true, true, true)))
    assert(f("fastText").getTokenizerName === "default")
    assert(flags("plain") === ((true, true, false)))
    assert(flags("score") === ((true, true, false)))
    assert(flags("kept") === ((true, false, false)))
    assert(flags("hidden") === ((false, true, true)))
    assert(f("stemmed").getTokenizerName === "en_stem")
    assert(flags("id") === ((true, true, true)))
  }

  test("an ip column is an ip field; a map column is a JSON object") {
    val path = tablePath("ip-map")
    spark.range(5).selectExpr("concat('10.0.0.', cast(id as string)) as addr", "map('k', id) as m")
      .coalesce(1).write.format("indextables")
      .option("spark.indextables.indexing.typemap.addr", "ip")
      .save(path)
    val f = fieldsOf(path)
    assert(f("addr").getType.toString.toLowerCase.contains("ip"), f("addr").getType)
    assert(f("m").getType.toString.toLowerCase.contains("json"), f("m").getType)
  }
}
