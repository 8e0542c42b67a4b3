package io.indextables.spark.transaction.state

import scala.collection.immutable

/** [[StringMapBase]] on Scala 2.13's collections, where `+` and `-` are final over these two. */
private[state] abstract class StringMapBase extends immutable.AbstractMap[String, String] {

  protected def without(key: String): immutable.Map[String, String]

  override def removed(key: String): immutable.Map[String, String] = without(key)
}
