package io.indextables.spark.sync

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

class SourceSchemaSuite extends AnyFunSuite {

  private val recorded = StructType(Seq(
    StructField("id", LongType, nullable = false),
    StructField("msg", StringType)))

  test("a source that gains columns gives them in its own order, the recorded ones as recorded") {
    val found = StructType(Seq(
      StructField("id", LongType),
      StructField("region", StringType),
      StructField("msg", StringType)))
    assert(SourceSchema.evolve(recorded, found) == Right(StructType(Seq(
      recorded("id"),
      StructField("region", StringType),
      recorded("msg")))))
    assert(SourceSchema.evolve(recorded, ParquetFooters.asNullable(recorded)) == Right(recorded))
  }

  test("a column that changes type or leaves is named") {
    val retyped = StructType(Seq(StructField("id", StringType), StructField("msg", StringType)))
    assert(SourceSchema.evolve(recorded, retyped) == Left(
      "the column 'id' is of type string, where the index holds it as bigint"))
    val dropped = StructType(Seq(StructField("id", LongType)))
    assert(SourceSchema.evolve(recorded, dropped).left.exists(_.contains("the column 'msg'")))
  }

  test("a file may lack the columns its table gained since, and nothing else") {
    val index = recorded.add("region", StringType)
    assert(SourceSchema.misfit(recorded, index, mayLack = true).isEmpty)
    assert(SourceSchema.misfit(recorded, index, mayLack = false) ==
      Some("it lacks the column 'region'"))
    assert(SourceSchema.misfit(index, recorded, mayLack = true) ==
      Some("it holds the column 'region', which the index does not"))
    val retyped = StructType(Seq(StructField("id", IntegerType)))
    assert(SourceSchema.misfit(retyped, index, mayLack = true) ==
      Some("the column 'id' is of type int, where the index holds it as bigint"))
  }
}
