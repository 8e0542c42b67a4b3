package io.indextables.spark

import org.apache.spark.SparkThrowable
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException

class SparkVersionCheckSuite extends AnyFunSuite {

  test("a JAR serves the patch releases of its lines (3.5; 4.0, 4.1, 4.2) and nothing else") {
    val spark35 = Seq("3.5")
    val spark4 = Seq("4.0", "4.1", "4.2")
    assert(SparkVersionCheck.serves(spark35, "3.5.9"))
    assert(SparkVersionCheck.serves(spark35, "3.5.0"))
    assert(!SparkVersionCheck.serves(spark35, "3.4.4"))
    assert(!SparkVersionCheck.serves(spark35, "3.50.1"))
    assert(!SparkVersionCheck.serves(spark35, "4.0.1"))
    assert(SparkVersionCheck.serves(spark4, "4.0.1"))
    assert(SparkVersionCheck.serves(spark4, "4.1.3"))
    assert(SparkVersionCheck.serves(spark4, "4.2.0"))
    assert(!SparkVersionCheck.serves(spark4, "4.3.0")) // not on Maven Central: never tried
    assert(!SparkVersionCheck.serves(spark4, "4.20.1"))
    assert(!SparkVersionCheck.serves(spark4, "3.5.9"))
    assert(!SparkVersionCheck.serves(spark4, "5.0.0"))
    assert(SparkVersionCheck.lineOf("4.2.0") == "4.2")
  }

  test("the JAR under test serves the Spark it runs on") {
    SparkLineGate.check()
    assert(BuildInfo.servedLines.contains(BuildInfo.sparkLine))
    assert(SparkVersionCheck.serves(BuildInfo.servedLines, org.apache.spark.SPARK_VERSION))
  }

  test("a JAR for the other Spark line is refused with both versions named") {
    val e = SparkLineGate.wrongLine("4.1.0", "2.13.16", Array("3.5"), "3.5.9", "2.12")
    assert(e.isInstanceOf[SparkThrowable])
    assert(e.getErrorClass == "INDEXTABLES_WRONG_SPARK_VERSION")
    assert(e.getSqlState == "0A000")
    assert(e.getSqlState == IndexTablesException.sqlStateOf(e.getErrorClass))
    assert(e.getMessage.startsWith("[INDEXTABLES_WRONG_SPARK_VERSION] "))
    assert(e.getMessage.contains("this is Spark 4.1.0 on Scala 2.13.16"))
    assert(e.getMessage.contains("serves Spark 3.5.x on Scala 2.12"))
    assert(e.getMessage.contains("indextables-spark_2.12"))
  }
}
