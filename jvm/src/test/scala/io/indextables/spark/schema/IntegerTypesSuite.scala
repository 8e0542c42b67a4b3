package io.indextables.spark.schema

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/** Widening Spark's integer types to a long and narrowing back without ever wrapping. */
class IntegerTypesSuite extends AnyFunSuite {

  test("tinyint, smallint, int and bigint are the integer types; nothing else is") {
    Seq(ByteType, ShortType, IntegerType, LongType).foreach(t => assert(IntegerTypes.contains(t)))
    Seq(DoubleType, DecimalType(10, 0), DateType, StringType, BooleanType)
      .foreach(t => assert(!IntegerTypes.contains(t), t))
  }

  test("each type's extremes widen to a long and narrow back to the type's own value") {
    val row = new GenericInternalRow(Array[Any](
      Byte.MinValue,
      Byte.MaxValue,
      Short.MinValue,
      Short.MaxValue,
      Int.MinValue,
      Long.MaxValue))
    val types = Seq(ByteType, ByteType, ShortType, ShortType, IntegerType, LongType)
    types.zipWithIndex.foreach { case (t, i) =>
      val wide = IntegerTypes.getLong(row, i, t)
      assert(IntegerTypes.narrow(t, wide) === Some(row.get(i, t)), t)
    }
  }

  test("a long outside the type is refused, never wrapped") {
    assert(IntegerTypes.narrow(ByteType, 128L).isEmpty)
    assert(IntegerTypes.narrow(ByteType, -129L).isEmpty)
    assert(IntegerTypes.narrow(ShortType, 32768L).isEmpty)
    assert(IntegerTypes.narrow(ShortType, -32769L).isEmpty)
    assert(IntegerTypes.narrow(IntegerType, Int.MaxValue + 1L).isEmpty)
    assert(IntegerTypes.narrow(ByteType, -128L) === Some(-128.toByte))
    assert(IntegerTypes.narrow(ShortType, 300L) === Some(300.toShort))
    assert(IntegerTypes.narrow(DoubleType, 1L).isEmpty)
  }
}
