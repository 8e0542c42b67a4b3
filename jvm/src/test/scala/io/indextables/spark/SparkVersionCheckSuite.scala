package io.indextables.spark

import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException

class SparkVersionCheckSuite extends AnyFunSuite {

  test("a JAR serves the patch releases of its line (3.5, 4.0) and nothing else") {
    assert(SparkVersionCheck.serves("3.5", "3.5.9"))
    assert(SparkVersionCheck.serves("3.5", "3.5.0"))
    assert(!SparkVersionCheck.serves("3.5", "3.4.4"))
    assert(!SparkVersionCheck.serves("3.5", "3.50.1"))
    assert(!SparkVersionCheck.serves("3.5", "4.0.1"))
    assert(SparkVersionCheck.serves("4.0", "4.0.1"))
    assert(!SparkVersionCheck.serves("4.0", "4.1.3")) // binary-incompatible Catalyst nodes
    assert(!SparkVersionCheck.serves("4.0", "4.2.0"))
    assert(!SparkVersionCheck.serves("4.0", "3.5.9"))
    assert(!SparkVersionCheck.serves("4.0", "5.0.0"))
  }

  test("the JAR under test serves the Spark it runs on") {
    SparkVersionCheck.check()
    assert(SparkVersionCheck.serves(BuildInfo.sparkLine, org.apache.spark.SPARK_VERSION))
  }

  test("a JAR for the other Spark line is refused with both versions named") {
    val e = IndexTablesErrors.wrongSparkVersion("4.1.0", "3.5", "3.5.9", "2.12")
    assert(e.isInstanceOf[IndexTablesException])
    assert(e.getErrorClass == "INDEXTABLES_WRONG_SPARK_VERSION")
    assert(e.getSqlState == "0A000")
    assert(e.getMessage.contains("Spark 4.1.0"))
    assert(e.getMessage.contains("Spark 3.5.x"))
    assert(e.getMessage.contains("indextables-spark_2.12"))
  }
}
