package io.indextables.spark.sql.commands

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StringType
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.BuildInfo
import io.indextables.spark.config.IndexTablesConf

/**
 * `DESCRIBE INDEXTABLES ENVIRONMENT`: what a bug report needs, one row per property: source
 * string (version, spark, hadoop), name string, value string. The versions of the plugin,
 * tantivy4java, Spark, Scala and Java; every Spark setting of the session; the Hadoop settings
 * the plugin reads (`spark.indextables.*`, `fs.s3a.*`, `fs.azure.*`). Secrets are redacted:
 * Spark's redaction patterns (`spark.redaction.regex`, `spark.sql.redaction.options.regex`)
 * and the plugin's own list of secret keys.
 */
case object DescribeIndexTablesEnvironmentCommand extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("source", StringType, nullable = false)(),
    AttributeReference("name", StringType, nullable = false)(),
    AttributeReference("value", StringType)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val versions = Seq(
      "indextables" -> BuildInfo.version,
      "tantivy4java" -> BuildInfo.tantivy4javaVersion,
      "spark" -> spark.version,
      "scala" -> scala.util.Properties.versionNumberString,
      "java" -> System.getProperty("java.version")
    )
    val sparkConf = spark.conf.getAll.toSeq
    val hadoopConf = spark.sessionState.newHadoopConf().iterator().asScala
      .map(e => e.getKey -> e.getValue)
      .filter { case (k, _) =>
        DescribeIndexTablesEnvironmentCommand.HadoopPrefixes.exists(k.startsWith)
      }
      .toSeq
    def rows(source: String, kvs: Seq[(String, String)]): Seq[Row] =
      DescribeIndexTablesEnvironmentCommand.redact(spark, kvs).sortBy(_._1).map {
        case (k, v) => Row(source, k, v)
      }
    versions.map { case (k, v) => Row("version", k, v) } ++ rows("spark", sparkConf) ++
      rows("hadoop", hadoopConf)
  }

  val HadoopPrefixes: Seq[String] = Seq("spark.indextables.", "fs.s3a.", "fs.azure.")

  val Redacted = "*********(redacted)"

  /** `kvs` with the value of every secret replaced by [[Redacted]]. */
  def redact(spark: SparkSession, kvs: Seq[(String, String)]): Seq[(String, String)] =
    spark.sessionState.conf.redactOptions(kvs).map { case (k, v) =>
      k -> (if (IndexTablesConf.isSecret(k)) Redacted else v)
    }.toSeq
}
