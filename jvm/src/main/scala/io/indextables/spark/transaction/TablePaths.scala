package io.indextables.spark.transaction

import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors

/**
 * The one place a path taken from the log (an add's, a remove's, a mergeskip's) becomes a file
 * path: reads, writes, merges and purges all resolve through [[resolve]], so a crafted or corrupt
 * log can never make the plugin read, overwrite or delete a file outside the table.
 *
 * The protocol writes paths relative to the table root (`date=2024-01-01/part-....split`). An
 * absolute path (a scheme, or a leading `/`) is accepted only when it names a file below the
 * root on the same file system; a path with a `..` segment is refused however it would resolve.
 * Stateless and thread-safe; runs on the driver and on executors.
 */
object TablePaths {

  /**
   * The file `path` names in the table at `tableRoot`. Throws `INDEXTABLES_PATH_OUTSIDE_TABLE`,
   * naming `action` (add, remove, ...) and the path, when it escapes the root.
   */
  def resolve(tableRoot: Path, path: String, action: String = "add"): Path = {
    def outside(why: String) = IndexTablesErrors.pathOutsideTable(tableRoot, action, path, why)
    if (path == null || path.trim.isEmpty) throw outside("the path is empty")
    val segments = path.split("[/\\\\]")
    if (segments.contains("..")) throw outside("it has a '..' segment")
    val asPath = new Path(path)
    val uri = asPath.toUri
    val absolute = uri.getScheme != null || path.startsWith("/") || path.startsWith("\\")
    if (!absolute) new Path(tableRoot, path)
    else {
      val root = tableRoot.toUri
      def norm(s: String) = Option(s).map(_.toLowerCase(java.util.Locale.ROOT))
      val sameFs = uri.getScheme == null ||
        (norm(uri.getScheme) == norm(root.getScheme) && norm(uri.getAuthority) == norm(
          root.getAuthority))
      val rootPath = root.getPath.stripSuffix("/") + "/"
      if (!sameFs || !uri.getPath.startsWith(rootPath) || uri.getPath.length <= rootPath.length) {
        throw outside("it is an absolute path that does not lie below the table root")
      }
      new Path(tableRoot, uri.getPath.substring(rootPath.length))
    }
  }
}
