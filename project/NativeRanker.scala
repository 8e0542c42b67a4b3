import java.io.RandomAccessFile

import sbt._
import sbt.util.Logger

/**
 * Builds the native ranker (jvm/native/rank, docs/ranking-native.md) with cargo and copies its
 * library to where the JAR's resources are made.
 *
 * Cargo's target directory is the user's cache, shared by every clone of the repository, as
 * `~/.cargo/registry` is: a fresh clone compiles the ranker alone, not tantivy and its 170
 * crates again. `INDEXTABLES_CARGO_TARGET_DIR` moves it.
 *
 * Clones share the directory, not the ranker: cargo names the ranker's library alike for every
 * clone, and would take another clone's newer library as this one's. So the directory records
 * which clone linked it last (`last-built-by`), and a build of another clone deletes it first;
 * cargo then builds the ranker alone again (seconds). A lock on a file of the directory, held
 * from that check to the copy, keeps two builds at once (two clones, or two sbt JVMs) apart.
 */
object NativeRanker {

  val LibraryName = "libindextables_rank.so"

  def targetDir: File =
    sys.env.get("INDEXTABLES_CARGO_TARGET_DIR").filter(_.nonEmpty).map(file)
      .getOrElse(file(sys.props("user.home")) / ".cache" / "indextables" / "native-rank")

  /** cargo from PATH, else where rustup installs it. */
  private def cargo: String = sys.env.get("CARGO").orElse {
    val home = file(sys.props("user.home")) / ".cargo" / "bin" / "cargo"
    val onPath = sys.env.getOrElse("PATH", "").split(java.io.File.pathSeparator)
      .exists(d => d.nonEmpty && (file(d) / "cargo").canExecute)
    if (!onPath && home.canExecute) Some(home.getAbsolutePath) else None
  }.getOrElse("cargo")

  /**
   * Builds the ranker of the repository at `root` and copies it to `out` when its bytes
   * differ (so nothing downstream reruns for nothing); cargo is a no-op when nothing changed.
   */
  def build(root: File, out: File, log: Logger): File = {
    val target = targetDir
    val manifest = root / "jvm" / "native" / "rank" / "Cargo.toml"
    IO.createDirectory(target)
    // One JVM may not lock a file twice: its own builds queue on the path first.
    target.getCanonicalPath.intern.synchronized {
      val file = new RandomAccessFile(target / ".indextables-build.lock", "rw")
      try {
        val channel = file.getChannel
        val lock = Option(channel.tryLock()).getOrElse {
          log.info(s"native ranker: waiting for another build in $target")
          channel.lock()
        }
        try {
          val marker = target / "last-built-by"
          val self = root.getCanonicalPath
          if (!marker.exists || IO.read(marker).trim != self) {
            IO.delete(Seq(target / "release" / LibraryName, target / "release" / "deps" / LibraryName))
            IO.write(marker, self)
          }
          val stderr = new StringBuilder
          val exit = scala.sys.process.Process(
            Seq(cargo, "build", "--release", "--locked", "--manifest-path", manifest.getAbsolutePath),
            root,
            "CARGO_TARGET_DIR" -> target.getAbsolutePath
          ) ! scala.sys.process.ProcessLogger(
            line => log.info(line),
            line => {
              stderr.append(line).append('\n')
              // Progress of a real build (minutes from clean); a no-op build prints "Finished".
              if (line.trim.startsWith("Compiling")) log.info(s"native ranker: ${line.trim}")
            }
          )
          if (exit != 0) {
            log.error(stderr.toString)
            sys.error(s"cargo build of the native ranker ($manifest) failed with exit code $exit")
          }
          val built = target / "release" / LibraryName
          if (!out.exists || !java.util.Arrays.equals(IO.readBytes(built), IO.readBytes(out)))
            IO.copyFile(built, out)
          out
        } finally lock.release()
      } finally file.close()
    }
  }
}
