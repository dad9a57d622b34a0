"""Real ``redis-server`` and ``nginx`` processes on loopback ephemeral ports, for tests and benchmarks.

Both run as child processes in the foreground with everything (configuration, pid, logs, temp files)
in a private temporary directory, and are always stopped on exit. A missing binary is an error, never a
skip: ``scripts/ensure_services.sh`` installs both (Debian packages ``redis-server`` and ``nginx``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NGINX_SITE = REPO / "deploy" / "agent-connector.nginx.conf"
# The addresses deploy/agent-connector.nginx.conf ships with; rendering replaces each one.
SHIPPED_REPLICAS = ("127.0.0.1:8001", "127.0.0.1:8002")
SHIPPED_LISTEN = "listen 127.0.0.1:8080;"


class ServiceMissing(RuntimeError):
    """A required service binary is not installed (run scripts/ensure_services.sh)."""


def find_binary(name: str, *fallbacks: str) -> str:
    found = shutil.which(name) or next((path for path in fallbacks if os.access(path, os.X_OK)), None)
    if found is None:
        raise ServiceMissing(f"{name} is not installed: run scripts/ensure_services.sh")
    return found


def free_port() -> int:
    """A loopback port nobody listens on right now (bound with port 0, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} during start-up")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


class RedisServer:
    """One ``redis-server`` (no persistence) that can be stopped and started again on the same port."""

    def __init__(self, directory: Path) -> None:
        self.binary = find_binary("redis-server", "/usr/bin/redis-server")
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        if self.process is not None and self.process.poll() is None:
            return
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
                "--logfile",
                str(self.directory / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_port(self.port, self.process, "redis-server")

    def stop(self) -> None:
        if self.process is not None:
            _stop(self.process)


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    with tempfile.TemporaryDirectory(prefix="acs-redis-") as directory:
        server = RedisServer(Path(directory))
        server.start()
        try:
            yield server
        finally:
            server.stop()


def render_nginx_site(replicas: Mapping[str, str], listen_port: int) -> str:
    """``deploy/agent-connector.nginx.conf`` with each shipped replica address and the listen port replaced.

    ``replicas`` maps each shipped address (``SHIPPED_REPLICAS``) to ``host:port``. Fails if the shipped
    file no longer contains what is replaced, so the test always exercises the shipped routing.
    """
    text = NGINX_SITE.read_text()
    for shipped in SHIPPED_REPLICAS:
        if shipped not in text:
            raise AssertionError(f"{NGINX_SITE.name} no longer contains {shipped}")
        text = text.replace(shipped, replicas[shipped])
    if SHIPPED_LISTEN not in text:
        raise AssertionError(f"{NGINX_SITE.name} no longer contains {SHIPPED_LISTEN!r}")
    return text.replace(SHIPPED_LISTEN, f"listen 127.0.0.1:{listen_port};")


@contextmanager
def nginx_balancer(replicas: Mapping[str, str], *, worker_processes: int = 1) -> Iterator[str]:
    """Run nginx with the shipped site config routed to ``replicas``; yield ``http://127.0.0.1:N``."""
    binary = find_binary("nginx", "/usr/sbin/nginx")
    directory = Path(tempfile.mkdtemp(prefix="acs-nginx-"))
    try:
        # As root nginx's workers run as `nobody`: they must be able to reach the temp directories.
        directory.chmod(0o755)
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (directory / sub).mkdir()
            (directory / sub).chmod(0o777)
        port = free_port()
        (directory / "agent-connector.conf").write_text(render_nginx_site(replicas, port))
        (directory / "nginx.conf").write_text(
            f"""
worker_processes {worker_processes};
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    include {directory}/agent-connector.conf;
}}
"""
        )
        process = subprocess.Popen(
            [binary, "-p", str(directory), "-c", str(directory / "nginx.conf"), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            try:
                _wait_for_port(port, process, "nginx")
            except RuntimeError as error:
                log = (directory / "error.log").read_text() if (directory / "error.log").exists() else ""
                stderr = (
                    process.stderr.read().decode() if process.poll() is not None and process.stderr else ""
                )
                raise RuntimeError(f"{error}\n{stderr}\n{log}") from None
            yield f"http://127.0.0.1:{port}"
        finally:
            _stop(process)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# redis-py types ``xrange`` for every client mode (async, decoded responses); a sync client that keeps
# bytes, as the tests use, returns exactly these pairs.
StreamEntries = list[tuple[bytes, dict[bytes, bytes]]]
