package io.indextables.spark.lake

/** The other table formats' libraries, which are the user's: never bundled, maybe absent. */
object Libraries {

  /** Whether `className` (a table format's library) is on the class path. */
  def onClassPath(className: String): Boolean =
    try {
      Class.forName(className, false, getClass.getClassLoader)
      true
    } catch { case _: ClassNotFoundException | _: LinkageError => false }
}
