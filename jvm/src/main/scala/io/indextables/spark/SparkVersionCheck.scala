package io.indextables.spark

/**
 * The Spark lines a JAR serves (`BuildInfo.servedLines`: 3.5 for the Scala 2.12 JAR; 4.0, 4.1
 * and 4.2 for the Scala 2.13 one). The refusal of another line is [[SparkLineGate]]'s, in Java,
 * since it must run before any Scala class of the JAR is loaded.
 */
object SparkVersionCheck {

  /** Whether a JAR serving Spark lines `lines` ("3.5"; "4.0", "4.1") serves Spark `version`. */
  def serves(lines: Seq[String], version: String): Boolean =
    SparkLineGate.serves(lines.toArray, version)

  /** The line ("4.2") of Spark `version` ("4.2.0"). */
  def lineOf(version: String): String = version.split('.').take(2).mkString(".")
}
