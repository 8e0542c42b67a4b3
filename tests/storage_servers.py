"""Real storage servers for the object-store suites, started on 127.0.0.1 by the tests.

- S3: moto in server mode, with IAM authentication on: the tests use an access key that the
  server issued, so wrong credentials are refused as by S3 itself.
- Azure Blob Storage: Azurite, with its well-known development account and key.

build/servers.sh installs both (the README's test command runs it). A server that is not
installed, or does not start, fails the test that needs it: it never skips.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
MOTO_SERVER = REPO_ROOT / ".venv" / "bin" / "moto_server"
AZURITE_BLOB = REPO_ROOT / "target" / "servers" / "node_modules" / ".bin" / "azurite-blob"

# Azurite's published development account: not a secret.
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_for_port(port: int, process: subprocess.Popen[bytes], name: str, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"{name} exited with {process.returncode}: {log.read_text()[-2000:]}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"{name} did not listen on 127.0.0.1:{port} within 60 s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def _require(binary: Path, name: str) -> None:
    if not binary.exists():
        raise RuntimeError(
            f"{name} is not installed at {binary}: run `bash build/servers.sh` "
            "(the README's test command does)"
        )


@dataclass
class S3Server:
    """A moto S3 server and the credentials it issued."""

    endpoint: str
    access_key: str
    secret_key: str
    process: subprocess.Popen[bytes]
    buckets: list[str] = field(default_factory=list)

    def client(self, secret_key: str | None = None) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=secret_key or self.secret_key,
        )

    def new_bucket(self) -> str:
        name = f"it-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        self.buckets.append(name)
        return name

    def conf(self) -> dict[str, str]:
        """The session settings that reach this server: upstream's keys."""
        return {
            "spark.indextables.aws.accessKey": self.access_key,
            "spark.indextables.aws.secretKey": self.secret_key,
            "spark.indextables.aws.region": REGION,
            "spark.indextables.aws.endpoint": self.endpoint,
            "spark.indextables.aws.pathStyleAccess": "true",
        }

    def stop(self) -> None:
        _stop(self.process)


def start_s3(work: Path, authenticated: bool = True) -> S3Server:
    """A moto S3 server on 127.0.0.1. `authenticated`: it checks every request's signature and
    the IAM user's policy, as S3 does. Without, it accepts any key: for clients whose signing
    moto 5 refuses, such as the AWS SDK v1 of Hadoop's S3A (moto issue 5948)."""
    _require(MOTO_SERVER, "moto (S3 server)")
    import boto3

    port = free_port()
    log = work / "moto.log"
    env = dict(os.environ)
    if authenticated:
        env["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"
    else:
        env.pop("INITIAL_NO_AUTH_ACTION_COUNT", None)
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    _wait_for_port(port, process, "moto_server", log)
    endpoint = f"http://127.0.0.1:{port}"
    if not authenticated:
        return S3Server(endpoint, "unchecked", "unchecked", process)
    # The first three requests run unauthenticated: they create the user the tests act as.
    iam = boto3.client(
        "iam",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="bootstrap",
        aws_secret_access_key="bootstrap",
    )
    iam.create_user(UserName="indextables-tests")
    iam.put_user_policy(
        UserName="indextables-tests",
        PolicyName="all",
        PolicyDocument='{"Version":"2012-10-17","Statement":'
        '[{"Effect":"Allow","Action":"*","Resource":"*"}]}',
    )
    key = iam.create_access_key(UserName="indextables-tests")["AccessKey"]
    return S3Server(endpoint, key["AccessKeyId"], key["SecretAccessKey"], process)


@dataclass
class AzureServer:
    """An Azurite blob server."""

    endpoint: str
    process: subprocess.Popen[bytes]

    @property
    def connection_string(self) -> str:
        return (
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
            f"AccountKey={AZURITE_KEY};BlobEndpoint={self.endpoint};"
        )

    def service(self) -> Any:
        from azure.storage.blob import BlobServiceClient

        return BlobServiceClient.from_connection_string(self.connection_string)

    def new_container(self) -> str:
        name = f"it-{uuid.uuid4().hex[:12]}"
        self.service().create_container(name)
        return name

    def table_url(self, container: str, name: str) -> str:
        return f"abfss://{container}@{AZURITE_ACCOUNT}.dfs.core.windows.net/{name}"

    def conf(self) -> dict[str, str]:
        return {"spark.indextables.azure.connectionString": self.connection_string}

    def stop(self) -> None:
        _stop(self.process)


def start_azurite(work: Path) -> AzureServer:
    _require(AZURITE_BLOB, "Azurite (Azure Blob Storage server)")
    port = free_port()
    log = work / "azurite.log"
    data = work / "azurite-data"
    data.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(AZURITE_BLOB),
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                str(port),
                "--location",
                str(data),
                "--skipApiVersionCheck",
                "--silent",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    _wait_for_port(port, process, "azurite-blob", log)
    return AzureServer(f"http://127.0.0.1:{port}/{AZURITE_ACCOUNT}", process)


class ThrottlingProxy:
    """A TCP proxy on 127.0.0.1 in front of a server, that forwards what clients send at no more
    than `rate` bytes per second (answers go back at full speed), and counts it. An upload
    through it takes long enough to be interrupted on purpose. Signatures stay valid: the bytes
    are forwarded unchanged."""

    def __init__(self, target_port: int, rate: int) -> None:
        import threading

        self.target_port, self.rate = target_port, rate
        self.sent = 0
        self._lock = threading.Lock()
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port: int = self._server.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    def _accept(self) -> None:
        import threading

        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, throttled: bool) -> None:
        try:
            while True:
                chunk = source.recv(16384)
                if not chunk:
                    break
                if throttled:
                    time.sleep(len(chunk) / self.rate)
                    with self._lock:
                        self.sent += len(chunk)
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def close(self) -> None:
        self._closed = True
        self._server.close()
