package io.indextables.spark.lake

import java.lang.reflect.{InvocationTargetException, Method}

import org.apache.spark.sql.delta.{DeltaLog, Snapshot}
import org.apache.spark.sql.delta.actions.Action

import io.indextables.spark.IndexTablesErrors

/**
 * The calls into `DeltaLog` whose binary signatures differ between the Delta releases of the
 * Spark lines served, made by name and by the shape of their parameters rather than compiled
 * against one release's. Delta 3.3 (Spark 3.5) and 4.0 (Spark 4.0) take
 * `getSnapshotAt(version, checkpointHint, catalogTable)` and
 * `getChanges(startVersion, failOnDataLoss)`; Delta 4.4 (the release for Spark 4.1 and 4.2) gave
 * `getSnapshotAt` a fourth parameter (a Boolean with a default) and `getChanges` an optional
 * `CatalogTable` before `failOnDataLoss`, so a call compiled against 4.0 fails there with
 * `NoSuchMethodError`. Each method is resolved once, on first use; a Delta without either fails
 * with an internal error naming it. Driver side.
 */
private[spark] object DeltaLogCalls {

  private val LongType = java.lang.Long.TYPE
  private val BooleanType = java.lang.Boolean.TYPE

  /**
   * `getSnapshotAt(version)` with every other parameter its default: of the overloads whose
   * first parameter is the version, the one that declares a default for each of the others
   * (Scala allows defaults on one overload only).
   */
  private lazy val snapshotAtMethod: (Method, Seq[Method]) = {
    val methods = classOf[DeltaLog].getMethods.toSeq
    val defaults = methods.filter(_.getParameterCount == 0).map(m => m.getName -> m).toMap
    methods
      .filter(m =>
        m.getName == "getSnapshotAt" && m.getParameterTypes.headOption.contains(LongType))
      .flatMap { m =>
        val rest = (2 to m.getParameterCount).map(i => defaults.get(s"getSnapshotAt$$default$$$i"))
        if (rest.forall(_.isDefined)) Some(m -> rest.flatten) else None
      }
      .sortBy(_._1.getParameterCount)
      .headOption
      .getOrElse(throw unresolved("getSnapshotAt(version, <defaults>)"))
  }

  /**
   * `getChanges(startVersion, ..., failOnDataLoss)`: the overload whose first parameter is the
   * start version, whose last is `failOnDataLoss`, and whose others are all optional (`Option`,
   * given `None`), with the fewest parameters.
   */
  private lazy val changesMethod: Method =
    classOf[DeltaLog].getMethods.toSeq
      .filter { m =>
        val types = m.getParameterTypes
        m.getName == "getChanges" && types.length >= 2 && types.head == LongType &&
        types.last == BooleanType && types.slice(
          1,
          types.length - 1).forall(_ == classOf[Option[_]])
      }
      .sortBy(_.getParameterCount)
      .headOption
      .getOrElse(throw unresolved("getChanges(startVersion, <options>, failOnDataLoss)"))

  /** The table's snapshot at `version`: Delta's error when that version cannot be rebuilt. */
  def snapshotAt(log: DeltaLog, version: Long): Snapshot = {
    val (method, defaults) = snapshotAtMethod
    val args = java.lang.Long.valueOf(version) +: defaults.map(_.invoke(log))
    invoke(method, log, args).asInstanceOf[Snapshot]
  }

  /**
   * Each commit from `start` on, as its version and its actions, failing (on iteration) when one
   * is missing: Delta's `getChanges(start, failOnDataLoss = true)`.
   */
  def changes(log: DeltaLog, start: Long): Iterator[(Long, Seq[Action])] = {
    val options = Seq.fill[AnyRef](changesMethod.getParameterCount - 2)(None)
    val args = (java.lang.Long.valueOf(start) +: options) :+ java.lang.Boolean.TRUE
    invoke(changesMethod, log, args).asInstanceOf[Iterator[(Long, Seq[Action])]]
  }

  private def invoke(method: Method, target: AnyRef, args: Seq[AnyRef]): AnyRef =
    try method.invoke(target, args: _*)
    catch { case e: InvocationTargetException => throw e.getCause }

  private def unresolved(what: String): Throwable =
    IndexTablesErrors.internalError(
      s"the Delta Lake on the class path has no DeltaLog.$what (Spark " +
        s"${org.apache.spark.SPARK_VERSION}): a Delta release for another Spark line?")
}
