// IndexTables for Spark: the JVM plugin (jvm/) packaged as one assembly JAR that the Python
// package (python/) ships. Spark, Scala and Hadoop are provided by the user's Spark.
//
// Two Spark lines, one per Scala version, from one code base: `build/sbt spark/test` builds and
// tests the Spark 3.5 / Scala 2.12 JAR, `build/sbt ++2.13 spark/test` the Spark 4 / Scala 2.13
// one. What differs between the lines lives in jvm/src/main/scala-spark-3.5 and
// jvm/src/main/scala-spark-4.x, behind one trait (`io.indextables.spark.compat.SparkShim`).

val tantivy4javaVersion = "0.31.0"

// Spark 3.5: Arrow, Avro, RoaringBitmap and ANTLR as Spark 3.5.9 ships them.
val spark35 = SparkLine(
  line = "3.5",
  servedLines = Seq("3.5"),
  sparkVersion = "3.5.9",
  scalaVersion = "2.12.18",
  sourceDir = "scala-spark-3.5",
  antlrVersion = "4.9.3",
  arrowVersion = "12.0.1",
  avroVersion = "1.11.5",
  roaringBitmapVersion = "0.9.45",
  deltaVersion = "3.3.2",
  icebergRuntime = "iceberg-spark-runtime-3.5_2.12")

// Spark 4: compiled against 4.0 (Arrow, Avro, RoaringBitmap and ANTLR as Spark 4.0 ships them),
// and the one JAR serves 4.0, 4.1 and 4.2. Spark 4.1 and 4.2 changed the binary signatures of
// Catalyst case classes it builds or copies (DataSourceV2Relation.create and copy; in 4.2 also
// AppendData, OverwriteByExpression, OverwritePartitionsDynamic, WriteDelta, CatalogTable and
// CatalogStorageFormat), so those calls go through the 4.x shim, by reflection
// (scala-spark-4.x/.../Reflective.scala); ParquetToSparkSchemaConverter is built from a SQLConf.
val spark4 = SparkLine(
  line = "4.0",
  servedLines = Seq("4.0", "4.1", "4.2"),
  sparkVersion = "4.0.1",
  scalaVersion = "2.13.16",
  sourceDir = "scala-spark-4.x",
  antlrVersion = "4.13.1",
  arrowVersion = "18.1.0",
  avroVersion = "1.12.0",
  roaringBitmapVersion = "1.3.0",
  deltaVersion = "4.0.0",
  icebergRuntime = "iceberg-spark-runtime-4.0_2.13")

// The Spark line a Scala version builds for.
def lineFor(scalaBinaryVersion: String): SparkLine = scalaBinaryVersion match {
  case "2.12" => spark35
  case "2.13" => spark4
  case other => sys.error(s"no Spark line for Scala $other")
}

// Spark 3.5's versions, for the bench project (Spark 3.5 only).
val sparkVersion = spark35.sparkVersion
val avroVersion = spark35.avroVersion
val deltaVersion = spark35.deltaVersion
// The Apache Iceberg runtime (both lines): compiled against, provided by the user at run time.
val icebergVersion = "1.10.0"
// The Delta Lake release for Spark 4.2, the oracle of the pytest run on Spark 4.2 (oracles42).
val delta42Version = "4.4.0"
// Object stores: S3 through the AWS SDK for Java v2, Azure Blob Storage through the Azure SDK.
val awsSdkVersion = "2.57.8"
val azureBlobVersion = "12.37.2"
val azureIdentityVersion = "1.19.0"
val azureJdkHttpVersion = "1.1.7"

// One version for the JAR and the pip package: read from the Python package's _version.py.
val projectVersion: String = {
  val src = IO.read(file("python/indextables/_version.py"))
  "__version__ = \"([^\"]+)\"".r.findFirstMatchIn(src).map(_.group(1)).getOrElse {
    sys.error("python/indextables/_version.py holds no __version__")
  }
}

ThisBuild / organization := "io.indextables"
ThisBuild / version := projectVersion
ThisBuild / scalaVersion := spark35.scalaVersion

// An AWS SDK module without the HTTP clients we do not use, and without what Spark provides.
def aws(m: ModuleID): ModuleID =
  m.exclude("software.amazon.awssdk", "netty-nio-client")
    .exclude("software.amazon.awssdk", "apache-client")
    .exclude("org.slf4j", "slf4j-api")

// An Azure SDK module without the Netty HTTP client, and without what Spark provides.
def azure(m: ModuleID): ModuleID =
  m.exclude("com.azure", "azure-core-http-netty")
    .exclude("com.fasterxml.jackson.core", "jackson-core")
    .exclude("com.fasterxml.jackson.core", "jackson-databind")
    .exclude("com.fasterxml.jackson.core", "jackson-annotations")
    .exclude("com.fasterxml.jackson.datatype", "jackson-datatype-jsr310")
    .exclude("com.fasterxml.jackson.dataformat", "jackson-dataformat-xml")
    .exclude("org.slf4j", "slf4j-api")
    .exclude("net.java.dev.jna", "jna")
    .exclude("net.java.dev.jna", "jna-platform")

// The Spark line of the Scala version being built.
lazy val sparkLine = settingKey[SparkLine]("The Spark line the Scala version builds for")

lazy val spark = (project in file("jvm"))
  .enablePlugins(Antlr4Plugin)
  .settings(
    crossScalaVersions := Seq(spark35.scalaVersion, spark4.scalaVersion),
    sparkLine := lineFor(scalaBinaryVersion.value),
    // The line's own sources, beside the shared ones.
    Compile / unmanagedSourceDirectories +=
      (Compile / sourceDirectory).value / sparkLine.value.sourceDir,
    Test / unmanagedSourceDirectories +=
      (Test / sourceDirectory).value / sparkLine.value.sourceDir,
    // The SQL command grammar (jvm/src/main/antlr4), generated at build time for the ANTLR runtime
    // that the line's Spark ships (4.9.3 in 3.5, 4.13 in 4.x), so it stays out of the assembly.
    Antlr4 / antlr4Version := sparkLine.value.antlrVersion,
    Antlr4 / antlr4PackageName := Some("io.indextables.spark.sql.parser"),
    Antlr4 / antlr4GenListener := false,
    Antlr4 / antlr4GenVisitor := true,
    Antlr4 / antlr4TreatWarningsAsErrors := true,
    Antlr4 / antlr4RuntimeDependency :=
      "org.antlr" % "antlr4-runtime" % sparkLine.value.antlrVersion % Provided,
    // sbt-antlr4 keeps its cache per project, not per Scala version, so one line's build would
    // compile the parser generated for the other line's runtime: the same generation, with its
    // cache beside the line's classes. ANTLR runs again only when the grammar changes.
    Antlr4 / antlr4Generate := {
      val out = (Antlr4 / javaSource).value
      val pkg = (Antlr4 / antlr4PackageName).value
      val pkgDir = pkg.fold(out)(p => out / p.replace('.', '/'))
      val flags = pkg.toSeq.flatMap(p => Seq("-package", p)) ++
        Seq(if ((Antlr4 / antlr4GenListener).value) "-listener" else "-no-listener") ++
        Seq(if ((Antlr4 / antlr4GenVisitor).value) "-visitor" else "-no-visitor") ++
        (if ((Antlr4 / antlr4TreatWarningsAsErrors).value) Seq("-Werror") else Nil)
      val classpath = Path.makeString((Antlr4 / managedClasspath).value.files)
      val log = streams.value.log
      val generate = FileFunction.cached(
        crossTarget.value / "antlr4-cache",
        FilesInfo.lastModified,
        FilesInfo.exists) { grammars =>
        IO.delete(out)
        val args = Seq("-cp", classpath, "org.antlr.v4.Tool", "-o", pkgDir.getAbsolutePath,
          "-Xexact-output-dir") ++ flags ++ grammars.toSeq.map(_.getAbsolutePath)
        val exit = scala.sys.process.Process("java", args) ! log
        if (exit != 0) sys.error(s"ANTLR failed with exit code $exit")
        (out ** "*.java").get.toSet
      }
      generate(((Antlr4 / sourceDirectory).value ** "*.g4").get.toSet).toSeq
    },
    name := "indextables-spark",
    javacOptions ++= Seq("--release", "17"),
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "17", "-Xlint:_"),
    scalacOptions += (scalaBinaryVersion.value match {
      case "2.12" => "-Ywarn-unused:imports,privates,locals,implicits,patvars"
      case _ => "-Wunused:imports,privates,locals,implicits,patvars"
    }),
    // Scala 2.13's -Xlint adds two lints that 2.12's lacks (exhaustive matches on unsealed types,
    // no `return` inside a closure): off, so that both lines are held to the same lints.
    scalacOptions ++= (scalaBinaryVersion.value match {
      case "2.12" => Nil
      case _ => Seq("-Xlint:-strict-unsealed-patmat,-nonlocal-return")
    }),
    // Warnings fail the build of the main code; tests only report them.
    Compile / compile / scalacOptions += "-Xfatal-warnings",
    libraryDependencies ++= {
      val line = sparkLine.value
      Seq(
        "org.apache.spark" %% "spark-sql" % line.sparkVersion % Provided,
        // The Avro state format uses the Avro (and its zstd-jni) that Spark ships: never bundled.
        "org.apache.avro" % "avro" % line.avroVersion % Provided,
        "org.roaringbitmap" % "RoaringBitmap" % line.roaringBitmapVersion % Provided,
        // A companion index over a Delta table reads the table's live files through Delta's own
        // snapshot API (sync/DeltaTableSource). Delta is the user's, on their class path when
        // their tables are Delta tables: never bundled.
        "io.delta" %% "delta-spark" % line.deltaVersion % Provided,
        // A companion index over an Iceberg table plans the table's live files through Iceberg's
        // own scan API (sync/IcebergTableSource): the user's runtime JAR, never bundled.
        "org.apache.iceberg" % line.icebergRuntime % icebergVersion % Provided,
        // Its POM also names older AWS and Azure SDKs; ours (below, with their exclusions) are the
        // ones used, and excluding its copies keeps Ivy (`spark-submit --packages`) from
        // resolving their other dependencies (the Azure SDK's Netty client).
        ("io.indextables" % "tantivy4java" % tantivy4javaVersion).classifier("linux-x86_64")
          .exclude("com.fasterxml.jackson.core", "jackson-databind")
          .exclude("software.amazon.awssdk", "s3")
          .exclude("com.azure", "azure-storage-blob"),
        ("org.apache.arrow" % "arrow-c-data" % line.arrowVersion)
          .exclude("org.apache.arrow", "arrow-vector")
          .exclude("org.apache.arrow", "arrow-memory-core")
          .exclude("org.slf4j", "slf4j-api"),
        // S3: the synchronous client over Apache HttpClient 5 (renamed into our namespace in the
        // assembly, so it cannot clash with another copy); the SDK's Netty and HttpClient 4
        // clients stay out.
        aws("software.amazon.awssdk" % "s3" % awsSdkVersion),
        aws("software.amazon.awssdk" % "sts" % awsSdkVersion),
        aws("software.amazon.awssdk" % "apache5-client" % awsSdkVersion),
        // Azure: the blob client over the JDK's own HTTP client instead of Netty, whose version
        // would clash with Spark's; Jackson is the one Spark ships.
        azure("com.azure" % "azure-storage-blob" % azureBlobVersion),
        azure("com.azure" % "azure-identity" % azureIdentityVersion),
        azure("com.azure" % "azure-core-http-jdk-httpclient" % azureJdkHttpVersion),
        "org.scalatest" %% "scalatest" % "3.2.19" % Test
      ) ++ (scalaBinaryVersion.value match {
        // `scala.jdk.CollectionConverters` on Scala 2.12: the scala-collection-compat that Spark
        // 3.5.9 ships, provided by it. Scala 2.13 has it in its library.
        case "2.12" => Seq("org.scala-lang.modules" %% "scala-collection-compat" % "2.7.0" % Provided)
        case _ => Seq.empty
      })
    },
    // A generated version constant, so the running JAR can say what it is.
    Compile / sourceGenerators += Def.task {
      val out = (Compile / sourceManaged).value / "io" / "indextables" / "spark" / "BuildInfo.scala"
      IO.write(
        out,
        s"""package io.indextables.spark
           |
           |/** Generated by the build. */
           |object BuildInfo {
           |  val version: String = "${version.value}"
           |  val sparkVersion: String = "${sparkLine.value.sparkVersion}"
           |  /** The Spark line compiled against (3.5, 4.0). */
           |  val sparkLine: String = "${sparkLine.value.line}"
           |  /** The Spark lines this JAR serves, with their patch releases (3.5; 4.0, 4.1, 4.2). */
           |  val servedLines: Seq[String] = Seq(${sparkLine.value.servedLines.map(l => "\"" + l + "\"").mkString(", ")})
           |  val scalaBinaryVersion: String = "${scalaBinaryVersion.value}"
           |  val tantivy4javaVersion: String = "$tantivy4javaVersion"
           |}
           |""".stripMargin
      )
      Seq(out)
    }.taskValue,
    // The same versions as a resource, so that `python -m indextables info` reads them from the
    // JAR without starting a JVM.
    Compile / resourceGenerators += Def.task {
      val out =
        (Compile / resourceManaged).value / "io" / "indextables" / "spark" / "build.properties"
      IO.write(
        out,
        s"version=${version.value}\nsparkVersion=${sparkLine.value.sparkVersion}\n" +
          s"sparkLine=${sparkLine.value.line}\n" +
          s"servedLines=${sparkLine.value.servedLines.mkString(",")}\n" +
          s"tantivy4javaVersion=$tantivy4javaVersion\nscalaVersion=${scalaBinaryVersion.value}\n"
      )
      Seq(out)
    }.taskValue,
    // The native ranker (jvm/native/rank, docs/ranking-native.md), built by cargo in the
    // user's cache (project/NativeRanker.scala) and carried in the JAR at /native/linux-x86_64/.
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "native" / "linux-x86_64" /
        NativeRanker.LibraryName
      Seq(NativeRanker.build((ThisBuild / baseDirectory).value, out, streams.value.log))
    }.taskValue,
    // Published as a thin JAR (`spark/publish`) for `spark-submit --packages`: the POM names its
    // dependencies instead of bundling them. Spark, Scala, Avro and ANTLR are `provided` (the
    // user's Spark ships them); tantivy4java (linux-x86_64 classifier), arrow-c-data and the
    // AWS and Azure SDKs, with the exclusions above, are compile dependencies that Ivy or Maven
    // fetches. The repository is a directory (target/maven-repo), to copy or serve as it is.
    autoScalaLibrary := false,
    libraryDependencies += "org.scala-lang" % "scala-library" % scalaVersion.value % Provided,
    publishMavenStyle := true,
    publishTo := Some(
      Resolver.file(
        "indextables-local",
        (ThisBuild / baseDirectory).value / "target" / "maven-repo")
    ),
    Compile / packageDoc / publishArtifact := false,
    // Re-running build/package.sh republishes the same version over the previous one.
    publishConfiguration := publishConfiguration.value.withOverwrite(true),
    pomIncludeRepository := (_ => false),
    licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0")),
    homepage := Some(url("https://github.com/indextables/indextables_spark")),
    // Tests fork one JVM and run suites one after another: native code and a SparkSession are
    // process-wide, and the machine has two cores. That JVM compiles with C1 only: the suites
    // are many short Spark jobs, and C2's compiler threads would take the CPU they need.
    Test / fork := true,
    Test / parallelExecution := false,
    Test / javaOptions ++= Seq(
      "-Xmx3g",
      "-XX:TieredStopAtLevel=1",
      "-Dspark.ui.enabled=false",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED"
    ),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    // The assembly is the one JAR users get. What Spark already ships (Scala, Hadoop, Arrow
    // vectors, Jackson, SLF4J) stays out, so nothing in it can clash with the user's classpath;
    // tantivy4java and arrow-c-data are JNI-bound and keep their names.
    // The Spark 3.5 one keeps the name the Python package looks for; the Spark 4 one is named
    // by its Scala version.
    assembly / assemblyJarName := (scalaBinaryVersion.value match {
      case "2.12" => s"indextables-spark-assembly-${version.value}.jar"
      case v => s"indextables-spark_$v-assembly-${version.value}.jar"
    }),
    assembly / assemblyOption ~= (_.withIncludeScala(false)),
    assembly / test := {},
    assembly / assemblyShadeRules := Seq(
      ShadeRule.rename("org.apache.hc.**" -> "io.indextables.shaded.hc.@1").inAll
    ),
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "services", _*) => MergeStrategy.concat
      case PathList("META-INF", "versions", _*) => MergeStrategy.first
      case PathList("META-INF", xs @ _*) if xs.lastOption.exists { n =>
            val l = n.toLowerCase
            l.endsWith(".sf") || l.endsWith(".dsa") || l.endsWith(".rsa") || l == "manifest.mf" ||
            l.startsWith("index.list") || l.startsWith("dependencies")
          } => MergeStrategy.discard
      case "module-info.class" => MergeStrategy.discard
      case x => (assembly / assemblyMergeStrategy).value.apply(x)
    }
  )

// The Delta Lake JARs the pytest suite checks row-level statements against (tests/delta_oracle.py),
// Iceberg's Spark runtime, which makes the Iceberg tables companion indexes are tested over, and
// Hadoop's S3A (hadoop-aws and its AWS SDK bundle), through which Delta keeps a table on S3, and
// the Spark Connect server the Python package is tested over: the
// bench project's JARs of them, from its resolution, copied to target/oracle-jars by
// build/package.sh. Never part of the assembly.
lazy val oracleJars =
  taskKey[Seq[File]]("Copies Delta Lake's and Iceberg's JARs to target/oracle-jars")

// The Spark Connect server's JAR: resolved by the bench project, never on its class path.
lazy val ConnectServer = config("connectServer").hide

// Benchmarks that need more than the product: Delta Lake, to measure our transaction log against
// Delta's on the same machine in the same run. Never part of the assembly or the test run; see
// tests/benchmarks/README.md.
lazy val bench = (project in file("jvm/bench"))
  .dependsOn(spark)
  .configs(ConnectServer)
  .settings(
    crossScalaVersions := Seq(spark35.scalaVersion),
    name := "indextables-bench",
    publish / skip := true,
    scalacOptions ++= Seq("-deprecation", "-feature", "-release", "17"),
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion,
      "org.apache.avro" % "avro" % avroVersion,
      "io.delta" %% "delta-spark" % deltaVersion,
      "org.apache.iceberg" % "iceberg-spark-runtime-3.5_2.12" % icebergVersion,
      // Hadoop's S3A file system (and its AWS SDK), of the Hadoop that Spark 3.5.9 ships: how
      // Delta reads and writes a table on S3 in the test of a companion index over one.
      "org.apache.hadoop" % "hadoop-aws" % "3.3.4",
      // The Spark Connect server, for the tests of the Python package over Spark Connect
      // (tests/connect_server.py): 3.5.0 is the one spark-connect_2.12 Maven Central serves for
      // Spark 3.5; it runs on Spark 3.5.9 (Spark itself is `provided` in its POM). In a
      // configuration of its own: its shaded Guava must not meet Spark's on the benchmarks'
      // class path.
      "org.apache.spark" %% "spark-connect" % "3.5.0" % ConnectServer
    ),
    run / fork := true,
    run / baseDirectory := (ThisBuild / baseDirectory).value,
    // A fixed heap, as benchmarks should run: no run pays for the heap growing or shrinking.
    run / javaOptions ++= Seq(
      "-Xms10g",
      "-Xmx10g",
      "-Dspark.ui.enabled=false",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED"
    ),
    // Extra JVM flags for the benchmark JVM only, e.g. a JFR recording.
    run / javaOptions ++= sys.env.get("BENCH_JVM_OPTS").toSeq.flatMap(_.split("\\s+")).filter(_.nonEmpty),
    oracleJars := {
      val report = update.value
      copyOracleJars(
        report.select(
          configurationFilter("compile"),
          moduleFilter(name = "delta-*") | moduleFilter(name = "iceberg-spark-runtime-*") |
            moduleFilter(name = "hadoop-aws") | moduleFilter(name = "aws-java-sdk-bundle"),
          artifactFilter(`type` = "jar", classifier = "")) ++ report.select(
          configurationFilter(ConnectServer.name),
          moduleFilter(name = "spark-connect_2.12"),
          artifactFilter(`type` = "jar", classifier = "")),
        Set(
          "delta-spark_2.12",
          "delta-storage",
          "iceberg-spark-runtime-3.5_2.12",
          "hadoop-aws",
          "aws-java-sdk-bundle",
          "spark-connect_2.12"),
        (ThisBuild / baseDirectory).value / "target" / "oracle-jars"
      )
    }
  )

// The oracles of the pytest run on Spark 4.0 (tests/delta_oracle.py): Delta Lake, Iceberg's Spark
// runtime and Hadoop's S3A (of the Hadoop 3.4.1 that Spark 4.0 ships, with its AWS SDK v2
// bundle), copied to target/oracle-jars-4.0 by `oracles40/oracleJars`. Only resolved, never
// compiled against; Spark 4 ships its Spark Connect server.
lazy val oracles40 = (project in file("jvm/oracles-4.0"))
  .settings(
    scalaVersion := spark4.scalaVersion,
    crossScalaVersions := Seq(spark4.scalaVersion),
    publish / skip := true,
    libraryDependencies ++= Seq(
      ("io.delta" %% "delta-spark" % spark4.deltaVersion).intransitive(),
      ("io.delta" % "delta-storage" % spark4.deltaVersion).intransitive(),
      ("org.apache.iceberg" % spark4.icebergRuntime % icebergVersion).intransitive(),
      ("org.apache.hadoop" % "hadoop-aws" % "3.4.1").intransitive(),
      ("software.amazon.awssdk" % "bundle" % "2.24.6").intransitive()
    ),
    oracleJars := copyOracleJars(
      update.value.select(
        configurationFilter("compile"),
        moduleFilter(),
        artifactFilter(`type` = "jar", classifier = "")),
      Set(
        "delta-spark_2.13",
        "delta-storage",
        "iceberg-spark-runtime-4.0_2.13",
        "hadoop-aws",
        "bundle"),
      (ThisBuild / baseDirectory).value / "target" / "oracle-jars-4.0"
    )
  )

// The Delta Lake oracle of the pytest run on Spark 4.2 (tests/delta_oracle.py): Delta 4.4, the
// release for Spark 4.2 (`delta-spark_2.13` 4.4.0 depends on Spark 4.2.0), copied to
// target/oracle-jars-4.2 by `oracles42/oracleJars`. Iceberg has no runtime for Spark 4.2. Only
// resolved, never compiled against: the plugin is compiled against Delta 4.0 and makes the calls
// that differ through `lake/DeltaLogCalls`.
lazy val oracles42 = (project in file("jvm/oracles-4.2"))
  .settings(
    scalaVersion := spark4.scalaVersion,
    crossScalaVersions := Seq(spark4.scalaVersion),
    publish / skip := true,
    libraryDependencies ++= Seq(
      ("io.delta" %% "delta-spark" % delta42Version).intransitive(),
      ("io.delta" % "delta-storage" % delta42Version).intransitive()
    ),
    oracleJars := copyOracleJars(
      update.value.select(
        configurationFilter("compile"),
        moduleFilter(),
        artifactFilter(`type` = "jar", classifier = "")),
      Set("delta-spark_2.13", "delta-storage"),
      (ThisBuild / baseDirectory).value / "target" / "oracle-jars-4.2"
    )
  )

// Copies the JARs named by `wanted` (artifact names) from `resolved` into `out`, emptied first;
// fails unless each is resolved exactly once.
def copyOracleJars(resolved: Seq[File], wanted: Set[String], out: File): Seq[File] = {
  val jars = resolved.filter(f => wanted.exists(w => f.getName.startsWith(w + "-"))).distinct
  if (jars.size != wanted.size) sys.error(s"oracleJars: expected $wanted, resolved $jars")
  IO.delete(out)
  jars.map { j =>
    val target = out / j.getName
    IO.copyFile(j, target)
    target
  }
}

lazy val root = (project in file("."))
  .aggregate(spark)
  .settings(publish / skip := true)
