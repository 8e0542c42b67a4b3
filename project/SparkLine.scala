/**
 * One Spark line the plugin is built for, with the versions of what that Spark ships and of the
 * lake libraries built for it. The Scala version picks the line (`build.sbt`, `sparkLine`): Scala
 * 2.12 builds for Spark 3.5, Scala 2.13 for Spark 4.
 *
 * @param line the Spark line compiled against ("3.5", "4.0")
 * @param servedLines the Spark lines the JAR serves, with their patch releases: ("3.5"), ("4.0",
 *   "4.1", "4.2")
 * @param sparkVersion the Spark compiled against (`provided`)
 * @param sourceDir the line's own source folder beside `scala/` (`src/main/<sourceDir>`)
 * @param antlrVersion the ANTLR runtime that Spark ships, which the grammar is generated for
 * @param arrowVersion the Arrow that Spark ships: arrow-c-data binds to its vector classes
 * @param avroVersion the Avro that Spark depends on, provided by it at run time
 * @param roaringBitmapVersion the RoaringBitmap that Spark ships, provided by it
 * @param deltaVersion the Delta Lake release for the line, provided by the user
 * @param icebergRuntime the Apache Iceberg Spark runtime artifact for the line, provided by the user
 */
final case class SparkLine(
    line: String,
    servedLines: Seq[String],
    sparkVersion: String,
    scalaVersion: String,
    sourceDir: String,
    antlrVersion: String,
    arrowVersion: String,
    avroVersion: String,
    roaringBitmapVersion: String,
    deltaVersion: String,
    icebergRuntime: String)
