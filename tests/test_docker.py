"""docker/: the compose file names only what exists, and the image's build steps (scripts, as
there is no Docker engine here) run, ending with the notebook-style example against real moto
and Azurite servers."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from storage_servers import AzureServer, S3Server

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCKER = REPO_ROOT / "docker"
COMPOSE = DOCKER / "compose.yaml"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(loaded, dict)
    return loaded


def _listens(service: str, spec: dict[str, Any]) -> set[int]:
    """The ports a service's process listens on, from what starts it."""
    if "build" in spec:
        # Ours: JupyterLab (entrypoint.sh) and the Spark UI (the Dockerfile's EXPOSE).
        entry = (DOCKER / "entrypoint.sh").read_text()
        exposed = re.search(r"^EXPOSE (.*)$", (DOCKER / "Dockerfile").read_text(), re.M)
        assert exposed, "the Dockerfile exposes no port"
        ports = {int(p) for p in exposed[1].split()}
        assert re.search(r"--port=8888\b", entry)
        return ports
    command = [str(c) for c in spec.get("command", [])]
    for flag in ("-p", "--blobPort"):
        if flag in command:
            return {int(command[command.index(flag) + 1])}
    raise AssertionError(f"service {service}: no port in its command {command}")


def test_every_service_port_and_volume_named_exists(compose: dict[str, Any]) -> None:
    services: dict[str, dict[str, Any]] = compose["services"]
    assert set(services) == {"spark", "s3", "azurite"}
    declared_volumes = set(compose.get("volumes") or {})
    used_volumes: set[str] = set()
    for name, spec in services.items():
        assert "image" in spec or "build" in spec, name
        if "build" in spec:
            context = (COMPOSE.parent / spec["build"]["context"]).resolve()
            assert context == REPO_ROOT
            assert (context / spec["build"]["dockerfile"]).is_file()
        for dependency in spec.get("depends_on", []):
            assert dependency in services, f"{name} depends on unknown service {dependency}"
        listening = _listens(name, spec)
        for port in spec.get("ports", []):
            host, _, container = str(port).partition(":")
            assert host.isdigit() and int(container) in listening, (name, port, listening)
        for volume in spec.get("volumes", []):
            source, _, target = volume.partition(":")
            assert target.startswith("/"), volume
            if source.startswith("."):
                assert (COMPOSE.parent / source).exists(), f"{name}: {source} does not exist"
            else:
                assert source in declared_volumes, f"{name}: volume {source} is not declared"
                used_volumes.add(source)
    assert used_volumes == declared_volumes, "a declared volume is used by no service"
    # Every endpoint the spark service is given points at a service, on a port it publishes.
    env = services["spark"]["environment"]
    for host, port in re.findall(r"https?://([a-z0-9-]+):(\d+)", " ".join(map(str, env.values()))):
        assert host in services, host
        assert int(port) in _listens(host, services[host]), (host, port)
    # The Dockerfile copies only files that exist (the wheel directory is build/wheel.sh's).
    for source in re.findall(
        r"^COPY (?:--\S+ )*(.+) \S+$", (DOCKER / "Dockerfile").read_text(), re.M
    ):
        for item in source.split():
            if item != "target/dist/":
                assert (REPO_ROOT / item).exists(), item


def test_the_java_step_finds_java_17_and_openssl_3() -> None:
    run = subprocess.run(
        ["bash", str(DOCKER / "install_java.sh")], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert 'version "17' in run.stdout and "libssl.so.3 present" in run.stdout


def test_the_entrypoint_runs_a_command_in_the_package_environment(fresh_venv: Path) -> None:
    run = subprocess.run(
        ["bash", str(DOCKER / "entrypoint.sh"), "python", "-m", "indextables", "--version"],
        capture_output=True,
        text=True,
        env=dict(os.environ, INDEXTABLES_VENV=str(fresh_venv.parent.parent)),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("indextables-spark ")


def test_the_notebook_example_runs_against_s3_and_azurite(
    fresh_venv: Path, s3: S3Server, azure: AzureServer, tmp_path: Path
) -> None:
    env = dict(
        os.environ,
        INDEXTABLES_S3_ENDPOINT=s3.endpoint,
        AWS_ACCESS_KEY_ID=s3.access_key,
        AWS_SECRET_ACCESS_KEY=s3.secret_key,
        AWS_REGION="us-east-1",
        INDEXTABLES_AZURE_CONNECTION_STRING=azure.connection_string,
    )
    run = subprocess.run(
        [str(fresh_venv), str(DOCKER / "notebooks" / "quickstart.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout + run.stderr[-5000:]
    assert "quickstart: OK" in run.stdout
    for store in ("s3", "azure"):
        match = re.search(
            rf"^{store}: (\d+) rows by SQL, (\d+) by the Column API", run.stdout, re.M
        )
        assert match and int(match[1]) == int(match[2]) > 0, run.stdout
