package io.indextables.spark.transaction.state

import scala.collection.immutable

/**
 * The base of the state's own immutable string maps, on Scala 2.12's collections: a removal is
 * `-`, which Scala 2.13 replaced by `removed` (the other Scala version's folder). Subclasses give
 * `without` and `updated`.
 */
private[state] abstract class StringMapBase extends immutable.AbstractMap[String, String] {

  /** This map without `key`. */
  protected def without(key: String): immutable.Map[String, String]

  override def +[V1 >: String](kv: (String, V1)): immutable.Map[String, V1] = updated(kv._1, kv._2)

  override def -(key: String): immutable.Map[String, String] = without(key)
}
