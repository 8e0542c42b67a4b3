package io.indextables.spark.transaction

import java.io.File

import scala.jdk.CollectionConverters._

import org.apache.avro.file.DataFileReader
import org.apache.avro.generic.{GenericDatumReader, GenericRecord}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Our hash must equal the reference's: the schema registry that 0.5.4 wrote into the state
 * manifest of `06_schema_dedup` maps each hash to its doc mapping. Only the registry is read
 * here (with Avro's generic reader); reading Avro state is not part of this package yet.
 */
class SchemaHashInteropSuite extends AnyFunSuite {

  test("hashes in the 0.5.4 schema registry equal SchemaHash of their doc mappings") {
    val root = TransactionTestUtils.interopFixtures
      .getOrElse(cancel("../shared/data/interop is absent"))
    val manifest =
      new File(root, "06_schema_dedup/_transaction_log/state-v00000000000000000012/_manifest.avro")
    assume(manifest.isFile)
    val reader =
      new DataFileReader[GenericRecord](manifest, new GenericDatumReader[GenericRecord]())
    val registry =
      try {
        val record = reader.next()
        record.get("schemaRegistry").asInstanceOf[java.util.Map[AnyRef, AnyRef]].asScala
          .map { case (k, v) => k.toString -> v.toString }.toMap
      } finally reader.close()
    assert(registry.nonEmpty)
    registry.foreach { case (hash, json) =>
      info(s"$hash -> ${json.take(80)}")
      assert(SchemaHash.compute(json) === hash, s"doc mapping: $json")
    }
  }
}
