package io.indextables.spark;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Properties;

import org.apache.spark.SparkThrowable;

/**
 * The check that the running Spark and Scala are of the line this JAR serves, in plain Java. Every
 * entry point that Spark loads by name (the session extensions, the data source, the catalog)
 * calls {@link #check} before it loads any Scala class of the JAR: on the other line those fail
 * to link (a Scala 2.13 class on Scala 2.12 is a {@code NoClassDefFoundError} for
 * {@code scala.$less$colon$less}, a Scala 2.12 class on Scala 2.13 one for
 * {@code scala.Serializable}), in the middle of a query, or silently for a session extension,
 * which Spark logs and skips. This class references nothing of Scala's: it reads the JAR's
 * {@code build.properties} and the running versions by reflection, so it links on every line.
 * Thread-safe; a passed check is not repeated.
 */
public final class SparkLineGate {

  /** The error class of the refusal. */
  public static final String ERROR_CLASS = "INDEXTABLES_WRONG_SPARK_VERSION";

  private static volatile boolean passed = false;

  private SparkLineGate() {}

  /**
   * Throws {@code INDEXTABLES_WRONG_SPARK_VERSION}, naming both versions, unless the running
   * Spark is of a line this JAR serves and runs on the Scala it was built for.
   */
  public static void check() {
    if (passed) return;
    Properties build = new Properties();
    try (InputStream in = SparkLineGate.class.getResourceAsStream("build.properties")) {
      if (in == null) throw brokenJar("it has no io/indextables/spark/build.properties", null);
      build.load(in);
    } catch (IOException e) {
      throw brokenJar("its io/indextables/spark/build.properties cannot be read", e);
    }
    String scala = build.getProperty("scalaVersion", "");
    String[] lines = build.getProperty("servedLines", "").split(",");
    String runningSpark = moduleValue("org.apache.spark.package$", "SPARK_VERSION");
    String runningScala = moduleValue("scala.util.Properties$", "versionNumberString");
    boolean scalaServed = runningScala == null || runningScala.startsWith(scala + ".");
    if (scalaServed && (runningSpark == null || serves(lines, runningSpark))) {
      passed = true;
      return;
    }
    throw wrongLine(runningSpark, runningScala, lines, build.getProperty("sparkVersion", ""), scala);
  }

  /**
   * A new instance of {@code className}, a Scala class of this JAR with a no-argument
   * constructor, once the check has passed: how each Java entry point reaches its Scala side.
   */
  public static Object newScalaInstance(String className) {
    check();
    try {
      return Class.forName(className).getConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw brokenJar(className + " cannot be instantiated: " + e, e);
    }
  }

  /** Whether a JAR serving Spark lines {@code lines} ("3.5"; "4.0", "4.1") serves {@code version}. */
  public static boolean serves(String[] lines, String version) {
    return Arrays.stream(lines).anyMatch(l -> !l.isEmpty() && version.startsWith(l + "."));
  }

  /** The refusal of a JAR for Spark {@code lines} on Scala {@code scala} by this Spark and Scala. */
  public static WrongLine wrongLine(
      String runningSpark, String runningScala, String[] lines, String builtFor, String scala) {
    StringBuilder served = new StringBuilder();
    for (String l : lines) served.append(served.length() == 0 ? "" : ", ").append(l).append(".x");
    return new WrongLine(
        "This IndexTables JAR (indextables-spark_" + scala + ", built against Spark " + builtFor
            + ") serves Spark " + served + " on Scala " + scala + ", but this is Spark "
            + runningSpark + " on Scala " + runningScala + ". Put the IndexTables JAR for Spark "
            + runningSpark + " on the class path instead (indextables-spark_2.12 for Spark 3.5, "
            + "indextables-spark_2.13 for Spark 4.0, 4.1 and 4.2).");
  }

  /**
   * {@code INDEXTABLES_INTERNAL_ERROR} from an entry point, which must not name a Scala class of
   * the JAR (the verifier would load it when the entry point links, before the check).
   */
  public static EntryPointError internalError(String what) {
    return new EntryPointError(
        "INDEXTABLES_INTERNAL_ERROR",
        "XX000",
        what + ". This is a bug in IndexTables; please report it with the query that raised it.",
        null);
  }

  private static EntryPointError brokenJar(String what, Throwable cause) {
    String jar = String.valueOf(SparkLineGate.class.getProtectionDomain().getCodeSource());
    return new EntryPointError(
        "INDEXTABLES_INTERNAL_ERROR",
        "XX000",
        "The IndexTables JAR " + jar + " is broken: " + what
            + ". Reinstall it (pip install --force-reinstall indextables-spark, or the JAR).",
        cause);
  }

  /** A Scala object's no-argument member, by reflection; null when it cannot be read. */
  private static String moduleValue(String module, String member) {
    try {
      Class<?> c = Class.forName(module);
      Object instance = c.getField("MODULE$").get(null);
      return String.valueOf(c.getMethod(member).invoke(instance));
    } catch (ReflectiveOperationException | LinkageError e) {
      return null;
    }
  }

  /**
   * {@code INDEXTABLES_WRONG_SPARK_VERSION}: a Spark error on both lines (PySpark and the Python
   * package map it by its class, to {@code UnsupportedSparkError}).
   */
  public static final class WrongLine extends EntryPointError {
    WrongLine(String message) {
      super(ERROR_CLASS, "0A000", message, null);
    }
  }

  /**
   * An error of the entry points, before the JAR's Scala classes may load: a Spark error with its
   * class and SQLSTATE, as {@code IndexTablesException} (a Scala class) is.
   */
  public static class EntryPointError extends RuntimeException implements SparkThrowable {
    private final String errorClass;
    private final String sqlState;

    EntryPointError(String errorClass, String sqlState, String message, Throwable cause) {
      super("[" + errorClass + "] " + message, cause);
      this.errorClass = errorClass;
      this.sqlState = sqlState;
    }

    @Override
    public String getErrorClass() {
      return errorClass;
    }

    /** Spark 4's name of {@link #getErrorClass}. */
    public String getCondition() {
      return errorClass;
    }

    @Override
    public String getSqlState() {
      return sqlState;
    }
  }
}
