package org.apache.spark.sql.indextables

import java.net.URI
import java.util

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.{CatalogStorageFormat, CatalogTable, CatalogTableType}
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Literal}
import org.apache.spark.sql.catalyst.streaming.StreamingRelationV2
import org.apache.spark.sql.catalyst.plans.logical.{AppendData, LocalRelation, OverwriteByExpression, OverwritePartitionsDynamic, Project}
import org.apache.spark.sql.connector.catalog.{Table, TableCapability}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.{LongType, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite

/** A case class shaped as Spark 4.2 shapes its write commands: a parameter added in the middle. */
final case class ReflectiveWide(
    table: String,
    query: String,
    isByName: Boolean,
    withSchemaEvolution: Boolean = false,
    write: Option[String] = None)

object ReflectiveWide {
  // As 4.2's `AppendData.byName`: a trailing parameter 4.0's callers do not pass.
  def byName(table: String, query: String, withSchemaEvolution: Boolean = true): ReflectiveWide =
    ReflectiveWide(table, query, isByName = true, withSchemaEvolution)
}

class ReflectiveSuite extends AnyFunSuite {

  private val options = new CaseInsensitiveStringMap(util.Map.of("k", "v"))

  private val table = new Table {
    override def name(): String = "t"
    override def schema(): StructType = new StructType().add("id", LongType)
    override def capabilities(): util.Set[TableCapability] = util.Set.of()
  }

  private val query = LocalRelation(AttributeReference("id", LongType)())

  test("copy sets the named fields and keeps every other one, wherever it stands") {
    val wide = ReflectiveWide("t", "q", isByName = true, withSchemaEvolution = true, Some("w"))
    assert(Reflective.copy(wide, "query" -> "q2") == wide.copy(query = "q2"))
    assert(Reflective.copy(wide, "write" -> None, "table" -> "u") == wide.copy("u", write = None))
  }

  test("call passes the leading arguments and fills the rest with the method's defaults") {
    assert(
      Reflective.call(classOf[ReflectiveWide], "byName", "t", "q") ==
        ReflectiveWide("t", "q", isByName = true, withSchemaEvolution = true))
  }

  test("construct fills the constructor's defaulted parameters") {
    assert(
      Reflective.construct(classOf[ReflectiveWide], "t", "q", java.lang.Boolean.TRUE) ==
        ReflectiveWide("t", "q", isByName = true))
  }

  test("a member the running Spark lacks fails with NoSuchMethodError naming it") {
    val e =
      intercept[NoSuchMethodError](Reflective.call(classOf[ReflectiveWide], "byPosition", "t"))
    assert(e.getMessage.contains("byPosition"))
    intercept[NoSuchMethodError](Reflective.copy(ReflectiveWide("t", "q", true), "nope" -> "x"))
  }

  test(
    "the shim's Catalyst calls build what the direct calls build on the Spark compiled against") {
    val relation = SparkLineShim.relation(table, options)
    // The same relation but for its columns' ids, which each call makes anew.
    val direct = DataSourceV2Relation.create(table, None, None, options)
    assert(relation == direct.copy(output = relation.output))
    assert(relation.output.map(_.name) == Seq("id"))
    val other = new CaseInsensitiveStringMap(util.Map.of("k", "w"))
    assert(SparkLineShim.withOptions(relation, other) == relation.copy(options = other))
    assert(SparkLineShim.withTable(relation, table) == relation.copy(table = table))
    // A stream's read: only its options change (Spark 4.2's relation has one field more).
    val stream = StreamingRelationV2(
      None,
      "indextables",
      table,
      options,
      relation.output.map(_.asInstanceOf[AttributeReference]),
      None,
      None,
      None)
    assert(SparkLineShim.withStreamOptions(stream, other) == stream.copy(extraOptions = other))
    val opts = Map("a" -> "b")
    val append = SparkLineShim.appendByName(relation, query, opts)
    assert(append == AppendData.byName(relation, query, opts))
    val overwrite = SparkLineShim.overwriteByName(relation, query, Literal(true), opts)
    assert(overwrite == OverwriteByExpression.byName(relation, query, Literal(true), opts))
    val projected = Project(query.output, query)
    assert(
      SparkLineShim.withQuery(append, projected) ==
        append.asInstanceOf[AppendData].copy(query = projected))
    val dynamic = OverwritePartitionsDynamic.byPosition(relation, query, opts)
    assert(SparkLineShim.withQuery(dynamic, projected) == dynamic.copy(query = projected))
    assert(SparkLineShim.withQuery(query, projected) == query) // not a write: unchanged
  }

  test("a session catalog entry holds its identity, type, location, provider and comment") {
    val location = new URI("file:/tmp/t")
    val entry = SparkLineShim.catalogTable(SessionCatalogEntry(
      TableIdentifier("t", Some("db")),
      CatalogTableType.EXTERNAL,
      location,
      "indextables",
      Some("c")))
    val expected = CatalogTable(
      identifier = TableIdentifier("t", Some("db")),
      tableType = CatalogTableType.EXTERNAL,
      storage = CatalogStorageFormat.empty.copy(locationUri = Some(location)),
      schema = new StructType(),
      provider = Some("indextables"),
      comment = Some("c"),
      createTime = entry.createTime
    )
    assert(entry == expected)
  }
}
