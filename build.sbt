// IndexTables for Spark: the JVM plugin (jvm/) packaged as one assembly JAR that the Python
// package (python/) ships. Spark, Scala and Hadoop are provided by the user's Spark.

val sparkVersion = "3.5.9"
val tantivy4javaVersion = "0.31.0"
// Must equal the Arrow that Spark 3.5 ships, because arrow-c-data binds to its vector classes.
val arrowVersion = "12.0.1"
// Must equal the Avro that Spark 3.5.9 depends on; provided by Spark at run time.
val avroVersion = "1.11.5"
// Deletion vectors are Roaring bitmaps: the RoaringBitmap that Spark 3.5.9 ships, provided by it.
val roaringBitmapVersion = "0.9.45"
// The Delta Lake release for Spark 3.5: compiled against, provided by the user at run time.
val deltaVersion = "3.3.2"
// The Apache Iceberg runtime for Spark 3.5: compiled against, provided by the user at run time.
val icebergVersion = "1.10.0"
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
ThisBuild / scalaVersion := "2.12.18"

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

lazy val spark = (project in file("jvm"))
  .enablePlugins(Antlr4Plugin)
  .settings(
    // The SQL command grammar (jvm/src/main/antlr4), generated at build time. The runtime is the
    // antlr4 4.9.3 that Spark 3.5 ships, so it stays out of the assembly.
    Antlr4 / antlr4Version := "4.9.3",
    Antlr4 / antlr4PackageName := Some("io.indextables.spark.sql.parser"),
    Antlr4 / antlr4GenListener := false,
    Antlr4 / antlr4GenVisitor := true,
    Antlr4 / antlr4TreatWarningsAsErrors := true,
    Antlr4 / antlr4RuntimeDependency := "org.antlr" % "antlr4-runtime" % "4.9.3" % Provided,
    name := "indextables-spark",
    javacOptions ++= Seq("--release", "17"),
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "17",
      "-Xlint:_", "-Ywarn-unused:imports,privates,locals,implicits,patvars"),
    // Warnings fail the build of the main code; tests only report them.
    Compile / compile / scalacOptions += "-Xfatal-warnings",
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion % Provided,
      // The Avro state format uses the Avro (and its zstd-jni) that Spark ships: never bundled.
      "org.apache.avro" % "avro" % avroVersion % Provided,
      "org.roaringbitmap" % "RoaringBitmap" % roaringBitmapVersion % Provided,
      // A companion index over a Delta table reads the table's live files through Delta's own
      // snapshot API (sync/DeltaTableSource). Delta is the user's, on their class path when
      // their tables are Delta tables: never bundled.
      "io.delta" %% "delta-spark" % deltaVersion % Provided,
      // A companion index over an Iceberg table plans the table's live files through Iceberg's
      // own scan API (sync/IcebergTableSource): the user's runtime JAR, never bundled.
      "org.apache.iceberg" % "iceberg-spark-runtime-3.5_2.12" % icebergVersion % Provided,
      // Its POM also names older AWS and Azure SDKs; ours (below, with their exclusions) are the
      // ones used, and excluding its copies keeps Ivy (`spark-submit --packages`) from
      // resolving their other dependencies (the Azure SDK's Netty client).
      ("io.indextables" % "tantivy4java" % tantivy4javaVersion).classifier("linux-x86_64")
        .exclude("com.fasterxml.jackson.core", "jackson-databind")
        .exclude("software.amazon.awssdk", "s3")
        .exclude("com.azure", "azure-storage-blob"),
      ("org.apache.arrow" % "arrow-c-data" % arrowVersion)
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
    ),
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
           |  val sparkVersion: String = "$sparkVersion"
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
        s"version=${version.value}\nsparkVersion=$sparkVersion\n" +
          s"tantivy4javaVersion=$tantivy4javaVersion\nscalaVersion=${scalaBinaryVersion.value}\n"
      )
      Seq(out)
    }.taskValue,
    // The native ranker (jvm/native/rank, docs/ranking-native.md), built by cargo and carried
    // in the JAR at /native/linux-x86_64/. Cargo is a no-op when nothing changed, and the
    // library is copied only when its bytes differ, so nothing downstream reruns for nothing.
    Compile / resourceGenerators += Def.task {
      val log = streams.value.log
      val root = (ThisBuild / baseDirectory).value
      val cargoTarget = root / "target" / "native-rank"
      val manifest = root / "jvm" / "native" / "rank" / "Cargo.toml"
      // cargo from PATH, else where rustup installs it.
      val cargo = sys.env.get("CARGO").orElse {
        val home = file(sys.props("user.home")) / ".cargo" / "bin" / "cargo"
        val onPath = sys.env.getOrElse("PATH", "").split(java.io.File.pathSeparator)
          .exists(d => d.nonEmpty && (file(d) / "cargo").canExecute)
        if (!onPath && home.canExecute) Some(home.getAbsolutePath) else None
      }.getOrElse("cargo")
      val stderr = new StringBuilder
      val exit = scala.sys.process.Process(
        Seq(cargo, "build", "--release", "--locked", "--manifest-path", manifest.getAbsolutePath),
        root,
        "CARGO_TARGET_DIR" -> cargoTarget.getAbsolutePath
      ) ! scala.sys.process.ProcessLogger(
        line => log.info(line),
        line => {
          stderr.append(line).append('\n')
          // Progress of a real build (minutes from clean); a no-op build prints only "Finished".
          if (line.trim.startsWith("Compiling")) log.info(s"native ranker: ${line.trim}")
        }
      )
      if (exit != 0) {
        log.error(stderr.toString)
        sys.error(s"cargo build of the native ranker ($manifest) failed with exit code $exit")
      }
      val built = cargoTarget / "release" / "libindextables_rank.so"
      val out =
        (Compile / resourceManaged).value / "native" / "linux-x86_64" / "libindextables_rank.so"
      if (!out.exists || !java.util.Arrays.equals(IO.readBytes(built), IO.readBytes(out)))
        IO.copyFile(built, out)
      Seq(out)
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
    // process-wide, and the machine has two cores.
    Test / fork := true,
    Test / parallelExecution := false,
    Test / javaOptions ++= Seq(
      "-Xmx3g",
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
    assembly / assemblyJarName := s"indextables-spark-assembly-${version.value}.jar",
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
      val out = (ThisBuild / baseDirectory).value / "target" / "oracle-jars"
      val wanted = Set(
        "delta-spark_2.12",
        "delta-storage",
        "iceberg-spark-runtime-3.5_2.12",
        "hadoop-aws",
        "aws-java-sdk-bundle",
        "spark-connect_2.12")
      val report = update.value
      val jars = (report
        .select(
          configurationFilter("compile"),
          moduleFilter(name = "delta-*") | moduleFilter(name = "iceberg-spark-runtime-*") |
            moduleFilter(name = "hadoop-aws") | moduleFilter(name = "aws-java-sdk-bundle"),
          artifactFilter(`type` = "jar", classifier = "")) ++ report.select(
          configurationFilter(ConnectServer.name),
          moduleFilter(name = "spark-connect_2.12"),
          artifactFilter(`type` = "jar", classifier = "")))
        .filter(f => wanted.exists(w => f.getName.startsWith(w + "-")))
        .distinct
      if (jars.size != wanted.size) sys.error(s"oracleJars: expected $wanted, resolved $jars")
      IO.delete(out)
      jars.map { j =>
        val target = out / j.getName
        IO.copyFile(j, target)
        target
      }
    }
  )

lazy val root = (project in file("."))
  .aggregate(spark)
  .settings(publish / skip := true)
