package io.indextables.spark.transaction

import org.scalatest.funsuite.AnyFunSuite

class SchemaHashSuite extends AnyFunSuite {

  private val mapping =
    """[{"name":"title","type":"text","tokenizer":"default","indexed":true,"stored":true},""" +
      """{"name":"id","type":"i64","fast":true,"indexed":true,"stored":true}]"""

  test("canonical form sorts keys and named array elements") {
    assert(SchemaHash.canonicalize(mapping) ===
      """[{"fast":true,"indexed":true,"name":"id","stored":true,"type":"i64"},""" +
      """{"indexed":true,"name":"title","stored":true,"tokenizer":"default","type":"text"}]""")
  }

  test("hash matches an independently computed vector") {
    // Python: base64.b64encode(hashlib.sha256(canonical.encode()).digest())[:16]
    assert(SchemaHash.compute(mapping) === "m+pCP//gL90vZvFZ")
    assert(SchemaHash.registryKey("m+pCP//gL90vZvFZ") === "docMappingSchema.m+pCP//gL90vZvFZ")
  }

  test("key order, field order and whitespace do not change the hash") {
    val reordered =
      """[ {"stored":true,"fast":true,"type":"i64","indexed":true,"name":"id"},
        |  {"type":"text","name":"title","stored":true,"indexed":true,"tokenizer":"default"} ]""".stripMargin
    assert(SchemaHash.compute(reordered) === SchemaHash.compute(mapping))
  }

  test("nested objects and named arrays are canonicalised recursively") {
    val a =
      """{"fields":[{"name":"b","opts":{"y":1,"x":2}},{"name":"a","sub":[{"name":"q"},{"name":"p"}]}]}"""
    val b =
      """{"fields":[{"sub":[{"name":"p"},{"name":"q"}],"name":"a"},{"opts":{"x":2,"y":1},"name":"b"}]}"""
    assert(SchemaHash.compute(a) === SchemaHash.compute(b))
  }

  test("arrays without names keep their order, and different content hashes differently") {
    assert(SchemaHash.compute("[1,2]") !== SchemaHash.compute("[2,1]"))
    assert(SchemaHash.compute(mapping) !== SchemaHash.compute(mapping.replace("i64", "u64")))
    assert(SchemaHash.compute(mapping).length === 16)
  }
}
