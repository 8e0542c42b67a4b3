package io.indextables.spark.storage

import java.io.{File, FileNotFoundException}
import java.net.URI
import java.time.Duration
import java.util.concurrent.{ConcurrentHashMap, Executors, ThreadFactory}
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._
import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.{Duration => ScalaDuration}

import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.IndexTablesConf
import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, AwsCredentials, AwsCredentialsProvider, AwsSessionCredentials, DefaultCredentialsProvider, StaticCredentialsProvider}
import software.amazon.awssdk.core.sync.RequestBody
import software.amazon.awssdk.core.ResponseBytes
import software.amazon.awssdk.http.apache5.Apache5HttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain
import software.amazon.awssdk.core.checksums.{RequestChecksumCalculation, ResponseChecksumValidation}
import software.amazon.awssdk.services.s3.{S3Client, S3Configuration}
import software.amazon.awssdk.services.s3.model._

/**
 * [[LogStore]] on S3 through the AWS SDK for Java v2, for `s3://`, `s3a://` and `s3n://` paths.
 *
 *  - `putIfAbsent` is a `PutObject` with `If-None-Match: *`: S3 answers 412 to every writer
 *    but the first, and 409 while another conditional write of the key is in flight (then the
 *    put is tried again, and meets the 412 once the other has landed).
 *  - Files above the multipart threshold are uploaded in parts, several at a time; a failed
 *    upload is aborted, so no part lingers and nothing appears at the destination.
 *  - Listing is by prefix, one page of up to 1,000 keys at a time.
 *
 * One client serves every table with the same settings. Thread-safe.
 */
final class S3LogStore private (val settings: AwsSettings) extends LogStore {

  private val provider: AwsCredentialsProvider = S3LogStore.credentialsProvider(settings)
  private val client: S3Client = S3LogStore.newClient(settings, provider)

  /** The credentials now (the provider refreshes them as they expire). */
  def credentials(): AwsCredentials = provider.resolveCredentials()

  private def bucket(path: Path): String = {
    val authority = path.toUri.getAuthority
    if (authority == null || authority.isEmpty)
      throw IndexTablesErrors.invalidStoragePath(
        path.toString,
        "s3://bucket/path (it names no bucket)")
    authority
  }

  private def key(path: Path): String = Option(path.toUri.getPath).getOrElse("").stripPrefix("/")

  private def prefix(dir: Path): String = {
    val k = key(dir)
    if (k.isEmpty || k.endsWith("/")) k else k + "/"
  }

  private def child(dir: Path, objectKey: String): Path = {
    val uri = dir.toUri
    new Path(new URI(uri.getScheme, uri.getAuthority, "/" + objectKey, null, null))
  }

  /**
   * Runs `body`, turning a missing key into `FileNotFoundException`, and a missing bucket or a
   * refused request into an error that names the path (never the credentials).
   */
  private def notFoundAsFnf[T](path: Path)(body: => T): T =
    try body
    catch {
      case _: NoSuchKeyException => throw new FileNotFoundException(s"File $path does not exist")
      case _: NoSuchBucketException =>
        throw IndexTablesErrors.storageContainerMissing("Bucket", bucket(path), path.toString)
      case e: S3Exception if e.statusCode() == 404 =>
        val code = Option(e.awsErrorDetails()).map(_.errorCode()).getOrElse("")
        if (code == "NoSuchBucket")
          throw IndexTablesErrors.storageContainerMissing("Bucket", bucket(path), path.toString)
        throw new FileNotFoundException(s"File $path does not exist")
      case e: S3Exception if e.statusCode() != 412 && e.statusCode() != 409 =>
        val details = Option(e.awsErrorDetails())
        val detail = details.map(d => s"${d.errorCode()}: ${d.errorMessage()}")
          .getOrElse(e.getMessage)
        throw IndexTablesErrors.storageRequestFailed(path.toString, e.statusCode(), detail, e)
    }

  override def read(path: Path): Array[Byte] = notFoundAsFnf(path) {
    val bytes: ResponseBytes[GetObjectResponse] =
      client.getObjectAsBytes(
        GetObjectRequest.builder().bucket(bucket(path)).key(key(path)).build())
    bytes.asByteArrayUnsafe()
  }

  override def readRange(path: Path, offset: Long, length: Int): Array[Byte] =
    if (length == 0) Array.emptyByteArray
    else
      notFoundAsFnf(path) {
        val request = GetObjectRequest.builder().bucket(bucket(path)).key(key(path))
          .range(s"bytes=$offset-${offset + length - 1}").build()
        val bytes = client.getObjectAsBytes(request).asByteArrayUnsafe()
        if (bytes.length != length)
          throw new java.io.EOFException(
            s"$path: asked for $length bytes at $offset, got ${bytes.length}")
        bytes
      }

  override def putIfAbsent(path: Path, bytes: Array[Byte]): Boolean = {
    val request = PutObjectRequest.builder().bucket(bucket(path)).key(key(path)).ifNoneMatch("*")
      .build()
    var attempt = 0
    while (true) {
      try {
        notFoundAsFnf(path)(client.putObject(request, RequestBody.fromBytes(bytes)))
        return true
      } catch {
        case e: S3Exception if e.statusCode() == 412 => return false
        case e: S3Exception if e.statusCode() == 409 && attempt < S3LogStore.ConflictRetries =>
          attempt += 1
          Thread.sleep(50L * attempt)
      }
    }
    false
  }

  override def list(dir: Path): Seq[Path] =
    listPages(dir, delimited = true).flatMap(_.contents().asScala.map(o => child(dir, o.key())))
      .filter(p => key(p) != prefix(dir)).toVector.sortBy(_.getName)

  override def listDirectories(dir: Path): Seq[Path] =
    listPages(dir, delimited = true).flatMap(_.commonPrefixes().asScala)
      .map(p => child(dir, p.prefix().stripSuffix("/"))).toVector.sortBy(_.getName)

  override def listRecursively(dir: Path): Iterator[FileInfo] =
    listPages(dir, delimited = false).flatMap(_.contents().asScala).map { o =>
      FileInfo(child(dir, o.key()), o.size(), o.lastModified().toEpochMilli)
    }

  /** The pages of a listing of `dir`'s prefix, fetched as they are consumed. */
  private def listPages(dir: Path, delimited: Boolean): Iterator[ListObjectsV2Response] = {
    val b = ListObjectsV2Request.builder().bucket(bucket(dir)).prefix(prefix(dir))
      .maxKeys(S3LogStore.PageSize)
    if (delimited) b.delimiter("/")
    val pages = notFoundAsFnf(dir)(client.listObjectsV2Paginator(b.build()).iterator())
    new Iterator[ListObjectsV2Response] {
      override def hasNext: Boolean = notFoundAsFnf(dir)(pages.hasNext)
      override def next(): ListObjectsV2Response = notFoundAsFnf(dir)(pages.next())
    }
  }

  override def exists(path: Path): Boolean =
    try {
      status(path)
      true
    } catch { case _: FileNotFoundException => false }

  override def overwrite(path: Path, bytes: Array[Byte]): Unit = notFoundAsFnf(path) {
    client.putObject(
      PutObjectRequest.builder().bucket(bucket(path)).key(key(path)).build(),
      RequestBody.fromBytes(bytes))
  }

  override def status(path: Path): FileInfo = notFoundAsFnf(path) {
    try {
      val head =
        client.headObject(HeadObjectRequest.builder().bucket(bucket(path)).key(key(path)).build())
      FileInfo(path, head.contentLength(), head.lastModified().toEpochMilli)
    } catch {
      // A HEAD's 404 carries no error code: a missing bucket must not pass for a missing key.
      case e: S3Exception if e.statusCode() == 404 =>
        checkBucket(path)
        throw e
    }
  }

  // Buckets seen to exist (a bucket is checked once, after its first 404).
  private val knownBuckets = ConcurrentHashMap.newKeySet[String]()

  private def checkBucket(path: Path): Unit = {
    val b = bucket(path)
    if (!knownBuckets.contains(b)) {
      client.headBucket(HeadBucketRequest.builder().bucket(b).build())
      knownBuckets.add(b)
    }
  }

  override def delete(path: Path): Boolean =
    exists(path) && {
      client.deleteObject(DeleteObjectRequest.builder().bucket(bucket(path)).key(key(path)).build())
      true
    }

  override def upload(local: File, dest: Path): Unit = {
    val length = local.length()
    if (length < settings.multipartThreshold || length <= settings.partSize) {
      notFoundAsFnf(dest) {
        client.putObject(
          PutObjectRequest.builder().bucket(bucket(dest)).key(key(dest)).build(),
          RequestBody.fromFile(local))
      }
    } else multipartUpload(local, length, dest)
    local.delete()
  }

  private def multipartUpload(local: File, length: Long, dest: Path): Unit = {
    val b = bucket(dest)
    val k = key(dest)
    val uploadId = notFoundAsFnf(dest) {
      client.createMultipartUpload(CreateMultipartUploadRequest.builder().bucket(b).key(k).build())
        .uploadId()
    }
    try {
      val partSize = settings.partSize
      val count = ((length + partSize - 1) / partSize).toInt
      implicit val ec: ExecutionContext = S3LogStore.uploadContext
      val uploads = (1 to count).grouped(math.max(1, settings.maxConcurrency)).flatMap { wave =>
        val running = wave.map { n =>
          Future {
            val offset = (n - 1).toLong * partSize
            val size = math.min(partSize, length - offset)
            val bytes = new Array[Byte](size.toInt)
            val in = new java.io.RandomAccessFile(local, "r")
            try {
              in.seek(offset)
              in.readFully(bytes)
            } finally in.close()
            val etag = client.uploadPart(
              UploadPartRequest.builder().bucket(b).key(k).uploadId(uploadId).partNumber(n)
                .contentLength(size).build(),
              RequestBody.fromBytes(bytes)).eTag()
            CompletedPart.builder().partNumber(n).eTag(etag).build()
          }
        }
        Await.result(Future.sequence(running), ScalaDuration.Inf)
      }.toVector
      client.completeMultipartUpload(
        CompleteMultipartUploadRequest.builder().bucket(b).key(k).uploadId(uploadId)
          .multipartUpload(CompletedMultipartUpload.builder().parts(uploads.asJava).build())
          .build())
    } catch {
      case e: Throwable =>
        try
          client.abortMultipartUpload(
            AbortMultipartUploadRequest.builder().bucket(b).key(k).uploadId(uploadId).build())
        catch { case abort: Exception => e.addSuppressed(abort) }
        throw e
    }
  }

  /**
   * A local copy of the object. Splits are read by tantivy4java from S3 itself and are never
   * copied; a companion build copies the Parquet files it indexes (`sync/CompanionIndexer`).
   */
  override def localCopy(path: Path, identity: String, cache: LocalSplitCache.Settings): File =
    LocalSplitCache.get(identity, cache) { target =>
      notFoundAsFnf(path) {
        java.nio.file.Files.deleteIfExists(target.toPath)
        client.getObject(
          GetObjectRequest.builder().bucket(bucket(path)).key(key(path)).build(),
          target.toPath)
      }
    }
}

object S3LogStore {

  /** Keys per listing page: S3's maximum. */
  val PageSize = 1000

  /** Tries of a conditional put that meets a concurrent conditional put of the same key. */
  val ConflictRetries = 20

  /** The store (and its client) for `settings`, shared by every table that uses them. */
  def forSettings(settings: AwsSettings): S3LogStore =
    LogStore.sharedStore(settings)(new S3LogStore(settings))

  private lazy val uploadContext: ExecutionContext = {
    val n = new AtomicInteger()
    ExecutionContext.fromExecutorService(Executors.newCachedThreadPool(new ThreadFactory {
      override def newThread(r: Runnable): Thread = {
        val t = new Thread(r, s"indextables-s3-upload-${n.incrementAndGet()}")
        t.setDaemon(true)
        t
      }
    }))
  }

  /** The region: the configured one, else the SDK's default chain, else us-east-1. */
  def region(settings: AwsSettings): Region =
    settings.region.map(Region.of).getOrElse {
      try new DefaultAwsRegionProviderChain().getRegion
      catch { case _: Exception => Region.US_EAST_1 }
    }

  /**
   * The credentials provider: static keys when given, else an instance of the configured
   * provider class (made here, on whichever JVM needs it: the executors build their own), else
   * the SDK's default chain.
   */
  def credentialsProvider(settings: AwsSettings): AwsCredentialsProvider =
    (settings.accessKey, settings.secretKey) match {
      case (Some(a), Some(s)) =>
        StaticCredentialsProvider.create(settings.sessionToken match {
          case Some(t) => AwsSessionCredentials.create(a, s, t)
          case None => AwsBasicCredentials.create(a, s)
        })
      case (Some(_), None) | (None, Some(_)) =>
        // Either may come from its Hadoop fallback (AwsSettings), so both names are given.
        val access = s"${IndexTablesConf.AwsAccessKey.key} (or fs.s3a.access.key)"
        val secret = s"${IndexTablesConf.AwsSecretKey.key} (or fs.s3a.secret.key)"
        val (present, missing) =
          if (settings.accessKey.isDefined) (access, secret) else (secret, access)
        throw IndexTablesErrors.incompleteCredentials(present, missing)
      case (None, None) =>
        settings.credentialsProviderClass.map(instantiateProvider)
          .getOrElse(DefaultCredentialsProvider.builder().build())
    }

  /** An instance of `className`: by its static `create()`, else its no-argument constructor. */
  def instantiateProvider(className: String): AwsCredentialsProvider = {
    val cls =
      try Class.forName(className, true, Thread.currentThread().getContextClassLoader)
      catch {
        case e: ClassNotFoundException =>
          throw IndexTablesErrors.invalidOption(
            IndexTablesConf.AwsCredentialsProviderClass.key,
            className,
            "a class on the classpath",
            e)
      }
    if (!classOf[AwsCredentialsProvider].isAssignableFrom(cls))
      throw IndexTablesErrors.invalidOption(
        IndexTablesConf.AwsCredentialsProviderClass.key,
        className,
        s"a class that implements ${classOf[AwsCredentialsProvider].getName}")
    val created: Option[AnyRef] =
      try Option(cls.getMethod("create")).filter(m =>
          java.lang.reflect.Modifier.isStatic(m.getModifiers)).map(_.invoke(null))
      catch { case _: NoSuchMethodException => None }
    val instance: AnyRef =
      created.getOrElse(cls.getDeclaredConstructor().newInstance().asInstanceOf[AnyRef])
    instance.asInstanceOf[AwsCredentialsProvider]
  }

  private def newClient(settings: AwsSettings, provider: AwsCredentialsProvider): S3Client = {
    val b = S3Client.builder()
      .httpClientBuilder(Apache5HttpClient.builder().maxConnections(64)
        .connectionTimeout(Duration.ofSeconds(10)).socketTimeout(Duration.ofSeconds(60)))
      .region(region(settings))
      .credentialsProvider(provider)
      // Checksums only where S3 requires them: S3-compatible stores reject the newer headers.
      .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
      .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
      .serviceConfiguration(
        S3Configuration.builder().pathStyleAccessEnabled(settings.pathStyleAccess).build())
    settings.endpoint.foreach(e => b.endpointOverride(URI.create(e)))
    b.build()
  }
}
