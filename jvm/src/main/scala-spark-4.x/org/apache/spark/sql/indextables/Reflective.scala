package org.apache.spark.sql.indextables

import java.lang.reflect.{Constructor, InvocationTargetException, Method}
import java.util.concurrent.ConcurrentHashMap

/**
 * Calls into Catalyst whose binary signatures differ between the Spark 4 releases the one Scala
 * 2.13 JAR serves (compiled against 4.0; Spark 4.1 and 4.2 gave case classes such as
 * `DataSourceV2Relation`, `AppendData` and `CatalogTable` more parameters, some of them in the
 * middle). A call compiled against 4.0 names 4.0's signature and fails on 4.2 with
 * `NoSuchMethodError`; these find the running Spark's method by name and arity instead, fill the
 * parameters the caller does not give with Scala's defaults (`name$default$N` of the companion,
 * `copy$default$N` of the instance) and cache what they resolved, per class. A Spark without
 * the member fails with `NoSuchMethodError`, naming it. Thread-safe; driver or executor.
 */
object Reflective {

  /** A resolved member and the methods giving its parameters' defaults (None: no default). */
  private final case class Resolved[M](member: M, defaults: Array[Option[Method]])

  private val methods = new ConcurrentHashMap[(Class[_], String, Int), Resolved[Method]]()
  private val constructors = new ConcurrentHashMap[(Class[_], Int), Resolved[Constructor[_]]]()
  private val copies = new ConcurrentHashMap[Class[_], (Resolved[Method], IndexedSeq[String])]()

  /**
   * `obj.copy(...)` with the fields named in `changes` (a case class's parameter names) set and
   * every other field as it is, whatever the running Spark's arity of `copy`.
   */
  def copy[T <: Product](obj: T, changes: (String, AnyRef)*): T = {
    val (resolved, names) = copies.computeIfAbsent(
      obj.getClass,
      c => {
        val names = obj.productElementNames.toIndexedSeq
        val copy = c.getMethods.filter(m =>
          m.getName == "copy" && m.getParameterCount == names.size) match {
          case Array(m) => m
          case found =>
            throw missing(s"one ${c.getName}.copy of ${names.size} parameters", found.length)
        }
        (Resolved(copy, defaultsOf(c, "copy", copy.getParameterCount)), names)
      }
    )
    val unknown = changes.map(_._1).filterNot(names.contains)
    if (unknown.nonEmpty) throw missing(s"fields ${unknown.mkString(", ")} of ${obj.getClass}", 0)
    val changed = changes.toMap
    val args = names.indices.map { i =>
      changed.getOrElse(names(i), resolved.defaults(i).get.invoke(obj))
    }
    invoke(resolved.member, obj.asInstanceOf[AnyRef], args).asInstanceOf[T]
  }

  /**
   * The companion object of case class `cls`'s method `name` called with `args` as its leading
   * parameters and the defaults of the rest: of the methods of that name with at least as many
   * parameters, whose leading parameters take `args`, the one with the fewest.
   */
  def call(cls: Class[_], name: String, args: AnyRef*): AnyRef = {
    val companion = companionOf(cls)
    val resolved = methods.computeIfAbsent(
      (cls, name, args.size),
      _ => {
        val found = companion.getClass.getMethods.toSeq
          .filter(m => m.getName == name && takes(m.getParameterTypes, args))
          .sortBy(_.getParameterCount)
          .headOption
          .getOrElse(throw missing(s"${cls.getName}.$name of ${args.size}+ parameters", 0))
        Resolved(found, defaultsOf(companion.getClass, name, found.getParameterCount))
      }
    )
    invoke(resolved.member, companion, withDefaults(resolved, companion, args))
  }

  /**
   * A new `cls` from `args` as the constructor's leading parameters and the defaults of the rest
   * (`$lessinit$greater$default$N` of the companion).
   */
  def construct[T](cls: Class[T], args: AnyRef*): T = {
    val resolved = constructors.computeIfAbsent(
      (cls, args.size),
      _ => {
        val found = cls.getConstructors.toSeq
          .filter(c => takes(c.getParameterTypes, args))
          .sortBy(_.getParameterCount)
          .headOption
          .getOrElse(throw missing(s"a ${cls.getName} constructor of ${args.size}+ parameters", 0))
        Resolved[Constructor[_]](
          found,
          defaultsOf(companionOf(cls).getClass, "$lessinit$greater", found.getParameterCount))
      }
    )
    val all = withDefaults(resolved, companionOf(cls), args)
    try resolved.member.newInstance(all: _*).asInstanceOf[T]
    catch { case e: InvocationTargetException => throw e.getCause }
  }

  private def withDefaults(
      resolved: Resolved[_],
      companion: AnyRef,
      args: Seq[AnyRef]): Seq[AnyRef] =
    resolved.defaults.indices.map { i =>
      if (i < args.size) args(i)
      else
        resolved.defaults(i).map(_.invoke(companion)).getOrElse {
          throw missing(s"a default for parameter ${i + 1} of $resolved", 0)
        }
    }

  private def invoke(m: Method, target: AnyRef, args: Seq[AnyRef]): AnyRef =
    try m.invoke(target, args: _*)
    catch { case e: InvocationTargetException => throw e.getCause }

  // Whether parameters of `types` take `args` as their leading ones (null fits any object).
  private def takes(types: Array[Class[_]], args: Seq[AnyRef]): Boolean =
    types.length >= args.size && args.indices.forall { i =>
      args(i) == null || boxed(types(i)).isInstance(args(i))
    }

  private def boxed(c: Class[_]): Class[_] =
    if (!c.isPrimitive) c
    else if (c == java.lang.Boolean.TYPE) classOf[java.lang.Boolean]
    else if (c == java.lang.Integer.TYPE) classOf[java.lang.Integer]
    else if (c == java.lang.Long.TYPE) classOf[java.lang.Long]
    else c

  // The default of each of the `arity` parameters of `name`, where `owner` declares one.
  private def defaultsOf(owner: Class[_], name: String, arity: Int): Array[Option[Method]] = {
    val byName = owner.getMethods.filter(_.getParameterCount == 0).map(m => m.getName -> m).toMap
    Array.tabulate(arity)(i => byName.get(s"$name$$default$$${i + 1}"))
  }

  private def companionOf(cls: Class[_]): AnyRef =
    Class.forName(cls.getName + "$", true, cls.getClassLoader).getField("MODULE$").get(null)

  // What a call compiled against the wrong signature would fail with, naming what was looked for.
  private def missing(what: String, found: Int): Throwable =
    new NoSuchMethodError(
      s"IndexTables: the running Spark ${org.apache.spark.SPARK_VERSION} has no $what " +
        s"(found $found)")
}
