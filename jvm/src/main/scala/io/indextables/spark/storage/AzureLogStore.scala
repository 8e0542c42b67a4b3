package io.indextables.spark.storage

import java.io.{ByteArrayOutputStream, File, FileNotFoundException}
import java.net.URI
import java.time.OffsetDateTime
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import com.azure.core.credential.{AccessToken, TokenCredential, TokenRequestContext}
import com.azure.core.http.jdk.httpclient.JdkHttpClientBuilder
import com.azure.core.util.{BinaryData, Context}
import com.azure.identity.{ClientSecretCredentialBuilder, DefaultAzureCredentialBuilder}
import com.azure.storage.blob.{BlobContainerClient, BlobServiceClient, BlobServiceClientBuilder}
import com.azure.storage.blob.models.{BlobRange, BlobRequestConditions, BlobStorageException, ListBlobsOptions, ParallelTransferOptions}
import com.azure.storage.blob.options.{BlobDownloadToFileOptions, BlobParallelUploadOptions}
import com.azure.storage.common.StorageSharedKeyCredential
import org.apache.hadoop.fs.Path
import reactor.core.publisher.Mono

import io.indextables.spark.IndexTablesErrors

/**
 * [[LogStore]] on Azure Blob Storage through the Azure SDK, for
 * `abfss://container@account.dfs.core.windows.net/path` and the `abfs`, `wasbs` and `wasb`
 * forms (the container is the URI's user, the account the first label of its host).
 *
 *  - `putIfAbsent` uploads with `If-None-Match: *`: every writer but the first gets 409.
 *  - Split files are uploaded as staged blocks, several at a time, committed by one block list,
 *    so a blob appears whole or not at all.
 *  - tantivy4java cannot reach an Azure endpoint it is not given, so splits are read from a
 *    local copy ([[LocalSplitCache]]) that ranged reads fetch in parallel.
 *
 * One client per account serves every table with the same settings. Thread-safe.
 */
final class AzureLogStore private (val settings: AzureSettings) extends LogStore {

  private val services = new ConcurrentHashMap[String, BlobServiceClient]()

  private def locate(path: Path): AzureLogStore.Location = {
    val uri = path.toUri
    val container = uri.getUserInfo
    val host = uri.getHost
    if (container == null || container.isEmpty || host == null)
      throw IndexTablesErrors.invalidStoragePath(
        path.toString,
        "an Azure path of the form abfss://container@account.dfs.core.windows.net/path")
    AzureLogStore.Location(
      host.takeWhile(_ != '.'),
      container,
      Option(uri.getPath).getOrElse("").stripPrefix("/"))
  }

  private def containerOf(loc: AzureLogStore.Location): BlobContainerClient =
    services.computeIfAbsent(loc.account, a => AzureLogStore.newService(settings, a))
      .getBlobContainerClient(loc.container)

  private def blob(path: Path) = {
    val loc = locate(path)
    containerOf(loc).getBlobClient(loc.blob)
  }

  private def prefix(dir: Path): String = {
    val b = locate(dir).blob
    if (b.isEmpty || b.endsWith("/")) b else b + "/"
  }

  private def child(dir: Path, name: String): Path = {
    val uri = dir.toUri
    new Path(new URI(uri.getScheme, uri.getAuthority, "/" + name, null, null))
  }

  /**
   * Runs `body`, turning a missing blob into `FileNotFoundException`, and a missing container
   * or a refused request into an error that names the path (never the credentials).
   */
  private def notFoundAsFnf[T](path: Path)(body: => T): T =
    try body
    catch {
      case e: BlobStorageException if e.getStatusCode == 404 =>
        if (String.valueOf(e.getErrorCode).contains("Container"))
          throw IndexTablesErrors.storageContainerMissing(
            "Container",
            locate(path).container,
            path.toString)
        throw new FileNotFoundException(s"File $path does not exist")
      case e: BlobStorageException if e.getStatusCode != 409 && e.getStatusCode != 412 =>
        throw IndexTablesErrors.storageRequestFailed(
          path.toString,
          e.getStatusCode,
          String.valueOf(e.getErrorCode),
          e)
    }

  override def read(path: Path): Array[Byte] =
    notFoundAsFnf(path)(blob(path).downloadContent().toBytes)

  override def readRange(path: Path, offset: Long, length: Int): Array[Byte] =
    if (length == 0) Array.emptyByteArray
    else
      notFoundAsFnf(path) {
        val out = new ByteArrayOutputStream(length)
        blob(path).downloadStreamWithResponse(
          out,
          new BlobRange(offset, length.toLong),
          null,
          null,
          false,
          null,
          Context.NONE)
        val bytes = out.toByteArray
        if (bytes.length != length)
          throw new java.io.EOFException(
            s"$path: asked for $length bytes at $offset, got ${bytes.length}")
        bytes
      }

  override def putIfAbsent(path: Path, bytes: Array[Byte]): Boolean =
    try {
      notFoundAsFnf(path) {
        blob(path).uploadWithResponse(
          new BlobParallelUploadOptions(BinaryData.fromBytes(bytes))
            .setRequestConditions(new BlobRequestConditions().setIfNoneMatch("*")),
          null,
          Context.NONE)
      }
      true
    } catch {
      case e: BlobStorageException if e.getStatusCode == 409 || e.getStatusCode == 412 => false
    }

  override def list(dir: Path): Seq[Path] =
    hierarchy(dir).filterNot(_.isPrefix == java.lang.Boolean.TRUE)
      .map(i => child(dir, i.getName)).toVector.sortBy(_.getName)

  override def listDirectories(dir: Path): Seq[Path] =
    hierarchy(dir).filter(_.isPrefix == java.lang.Boolean.TRUE)
      .map(i => child(dir, i.getName.stripSuffix("/"))).toVector.sortBy(_.getName)

  private def hierarchy(dir: Path) = {
    val options = new ListBlobsOptions().setPrefix(prefix(dir)).setMaxResultsPerPage(5000)
    notFoundAsFnf(dir) {
      containerOf(locate(dir)).listBlobsByHierarchy("/", options, null).asScala.toVector
    }
  }

  override def listRecursively(dir: Path): Iterator[FileInfo] = {
    val options = new ListBlobsOptions().setPrefix(prefix(dir)).setMaxResultsPerPage(5000)
    val it = notFoundAsFnf(dir)(containerOf(locate(dir)).listBlobs(options, null).iterator())
    new Iterator[FileInfo] {
      override def hasNext: Boolean = notFoundAsFnf(dir)(it.hasNext)
      override def next(): FileInfo = {
        val item = notFoundAsFnf(dir)(it.next())
        val props = item.getProperties
        FileInfo(
          child(dir, item.getName),
          props.getContentLength,
          props.getLastModified.toInstant.toEpochMilli)
      }
    }
  }

  override def exists(path: Path): Boolean =
    try {
      status(path)
      true
    } catch { case _: FileNotFoundException => false }

  override def overwrite(path: Path, bytes: Array[Byte]): Unit =
    notFoundAsFnf(path)(blob(path).upload(BinaryData.fromBytes(bytes), true))

  override def status(path: Path): FileInfo = notFoundAsFnf(path) {
    try {
      val props = blob(path).getProperties
      FileInfo(path, props.getBlobSize, props.getLastModified.toInstant.toEpochMilli)
    } catch {
      // A HEAD's 404 may carry no error code: a missing container must not pass for a missing
      // blob.
      case e: BlobStorageException if e.getStatusCode == 404 =>
        val loc = locate(path)
        if (!knownContainers.contains(s"${loc.account}/${loc.container}")) {
          if (!containerOf(loc).exists())
            throw IndexTablesErrors.storageContainerMissing(
              "Container",
              loc.container,
              path.toString)
          knownContainers.add(s"${loc.account}/${loc.container}")
        }
        throw e
    }
  }

  // Containers seen to exist (a container is checked once, after its first 404).
  private val knownContainers = ConcurrentHashMap.newKeySet[String]()

  override def delete(path: Path): Boolean = notFoundAsFnf(path)(blob(path).deleteIfExists())

  private def transferOptions = new ParallelTransferOptions()
    .setBlockSizeLong(settings.blockSize)
    .setMaxSingleUploadSizeLong(settings.blockSize)
    .setMaxConcurrency(settings.maxConcurrency)

  override def upload(local: File, dest: Path): Unit = {
    notFoundAsFnf(dest) {
      blob(dest).uploadFromFile(
        local.getAbsolutePath,
        transferOptions,
        null,
        null,
        null,
        null,
        null)
    }
    local.delete()
  }

  override def localCopy(path: Path, identity: String, cache: LocalSplitCache.Settings): File =
    LocalSplitCache.get(identity, cache) { target =>
      notFoundAsFnf(path) {
        blob(path).downloadToFileWithResponse(
          new BlobDownloadToFileOptions(target.getAbsolutePath)
            .setParallelTransferOptions(
              new com.azure.storage.common.ParallelTransferOptions()
                .setBlockSizeLong(settings.blockSize)
                .setMaxConcurrency(settings.maxConcurrency)),
          null,
          Context.NONE
        )
      }
    }
}

object AzureLogStore {

  /** Where a path points: storage account, container, and blob name within it. */
  private final case class Location(account: String, container: String, blob: String)

  /** The store (and its clients) for `settings`, shared by every table that uses them. */
  def forSettings(settings: AzureSettings): AzureLogStore =
    LogStore.sharedStore(settings)(new AzureLogStore(settings))

  // The SDK sets Content-Length itself; the JDK's client accepts that only when allowed (read
  // once, before its first request), else it drops the header and warns on every request.
  private val RestrictedHeaders = "jdk.httpclient.allowRestrictedHeaders"
  if (System.getProperty(RestrictedHeaders) == null)
    System.setProperty(RestrictedHeaders, "content-length")

  private def newService(settings: AzureSettings, account: String): BlobServiceClient = {
    val b = new BlobServiceClientBuilder().httpClient(new JdkHttpClientBuilder().build())
    val endpoint = s"https://$account.blob.core.windows.net"
    settings.connectionString match {
      case Some(cs) => b.connectionString(cs)
      case None =>
        b.endpoint(endpoint)
        settings.keyFor(account) match {
          case Some(key) => b.credential(new StorageSharedKeyCredential(account, key))
          case None =>
            val credential: TokenCredential = settings.bearerToken match {
              case Some(token) =>
                new TokenCredential {
                  override def getToken(request: TokenRequestContext): Mono[AccessToken] =
                    Mono.just(new AccessToken(token, OffsetDateTime.now().plusHours(1)))
                }
              case None =>
                (settings.tenantId, settings.clientId, settings.clientSecret) match {
                  case (Some(t), Some(c), Some(s)) =>
                    new ClientSecretCredentialBuilder().tenantId(t).clientId(c).clientSecret(s)
                      .build()
                  case _ => new DefaultAzureCredentialBuilder().build()
                }
            }
            b.credential(credential)
        }
    }
    b.buildClient()
  }
}
