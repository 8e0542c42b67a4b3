package io.indextables.spark.storage

import org.apache.hadoop.fs.Path
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials

/**
 * What tantivy4java needs to reach splits on S3 itself (reads and merges): credentials resolved
 * on this JVM from an [[S3LogStore]]'s provider, and its region, endpoint and path style.
 * `toString` never prints a secret.
 */
final case class S3Access(
    accessKey: String,
    secretKey: String,
    sessionToken: Option[String],
    region: String,
    endpoint: Option[String],
    pathStyleAccess: Boolean) {
  override def toString: String = s"S3Access(region=$region, endpoint=$endpoint)"

  /** Identifies the credentials without holding them in clear (pooled searchers' keys). */
  def fingerprint: String =
    java.util.UUID.nameUUIDFromBytes(
      s"$accessKey|$secretKey|${sessionToken.getOrElse("")}|$region|$endpoint|$pathStyleAccess"
        .getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString
}

object S3Access {
  def apply(store: S3LogStore): S3Access = {
    val settings = store.settings
    val credentials = store.credentials()
    val token = credentials match {
      case s: AwsSessionCredentials => Some(s.sessionToken())
      case _ => None
    }
    S3Access(
      credentials.accessKeyId(),
      credentials.secretAccessKey(),
      token,
      S3LogStore.region(settings).id(),
      settings.endpoint,
      settings.pathStyleAccess)
  }

  /** The `s3://bucket/key` URL tantivy4java takes for a path of any S3 scheme (s3a, s3n). */
  def url(path: Path): String = {
    val uri = path.toUri
    s"s3://${uri.getAuthority}${uri.getPath}"
  }
}
