package io.indextables.spark.schema

/**
 * How nested values are stored in a split: a struct column as a JSON object, an array column as
 * a JSON object that holds the array under [[ArrayKey]] (a JSON field's root must be an object).
 * Both write paths store them so, and the read path undoes it.
 */
object StoredJson {
  val ArrayKey: String = "_values"
}
