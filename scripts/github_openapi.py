"""Fetch, verify and extract GitHub's REST API description (npm package ``@octokit/openapi``).

The full dereferenced description (``generated/api.github.com.deref.json``, ~73 MB, 1,223 operations in
the pinned version) is the realistic large catalog for benchmarks. It is never committed: ``fetch``
downloads the pinned tarball with ``npm pack`` into ``.cache/`` (gitignored) and refuses it unless its
SHA-256 equals the constant below, and the document inside must match its own pinned digest too.

Tests and the CLI's embedded default use a small committed extract instead (package data:
``src/agent_connector_sdk/connectors/data/github_extract.json``): a valid OpenAPI document holding a
handful of operations copied verbatim from the full one, including the largest
(``issues/list-events-for-timeline``). Its ``x-agent-connector-extract`` member records where it came from
(package, version, tarball and document digests). For tests the extract's own bytes are the source
bytes, because they are what the tools are generated from.

Usage (from the repository root)::

    python -m scripts.github_openapi fetch            # download + verify, print stats
    python -m scripts.github_openapi extract          # (re)write the committed extract
    python -m scripts.github_openapi extract --check  # exit 1 if the committed extract is stale
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_connector_sdk.connectors._sources import GITHUB_EXTRACT_PATH

__all__ = [
    "DOCUMENT_MEMBER",
    "DOCUMENT_SHA256",
    "EXTRACT_OPERATIONS",
    "EXTRACT_PATH",
    "HTTP_METHODS",
    "LARGEST_OPERATION",
    "OPERATION_COUNT",
    "PACKAGE",
    "TARBALL_SHA256",
    "VERSION",
    "GitHubDescription",
    "build_extract",
    "count_operations",
    "encode_extract",
    "fetch_tarball",
    "load_github_description",
]

PACKAGE = "@octokit/openapi"
# Pinned on 2026-11-29 (`npm view @octokit/openapi version` -> 23.0.2).
VERSION = "23.0.2"
# sha256 of the `npm pack` tarball (npm's own integrity is sha512; we pin our own sha256 of the bytes).
TARBALL_SHA256 = "71a18407dd5e8464f4e0525daf03deabbe65abd9287d6adc7b5d98f516cd0d0c"
DOCUMENT_MEMBER = "package/generated/api.github.com.deref.json"
DOCUMENT_SHA256 = "a631e5d9cf86ad9711e1da69015589fb270cc0f17ff33731d22b5eae845219c2"
# Operations (path x HTTP method) in the pinned document; checked on every load.
OPERATION_COUNT = 1223
LARGEST_OPERATION = "issues/list-events-for-timeline"

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

REPO_ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = REPO_ROOT / ".cache" / "octokit-openapi"
EXTRACT_PATH = GITHUB_EXTRACT_PATH

# The committed extract: the largest operation plus small ones chosen for variety (request bodies,
# no-content responses, non-JSON responses, query parameters, a response with several 2xx codes).
EXTRACT_OPERATIONS = (
    LARGEST_OPERATION,  # GET, path + query parameters, ~440 KB, array response (wrapped by FastMCP)
    "issues/create-comment",  # POST with a JSON request body
    "issues/add-labels",  # POST, request body with alternatives
    "issues/lock",  # PUT with a body, 204 No Content
    "repos/delete",  # DELETE, 204 No Content
    "meta/root",  # GET without parameters, JSON object response
    "meta/get-zen",  # text/plain response
    "meta/get-octocat",  # query parameter, non-JSON response
    "markdown/render",  # POST body, text/html response
    "users/get-by-username",  # path parameter, object response with alternatives
)


class FetchError(RuntimeError):
    """The pinned package could not be fetched or failed verification."""


@dataclass(frozen=True)
class GitHubDescription:
    """The verified full description: its exact bytes, parsed form and SHA-256."""

    raw: bytes
    document: dict[str, Any]
    sha256: str


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch_tarball(cache_dir: Path = CACHE_DIR) -> Path:
    """Return the path of the verified pinned tarball, downloading it with ``npm pack`` if needed.

    A cached file whose digest does not match is deleted and fetched again; a fresh download that
    does not match raises :class:`FetchError` (never used unverified).
    """
    tarball = cache_dir / f"octokit-openapi-{VERSION}.tgz"
    if tarball.exists():
        if _sha256(tarball.read_bytes()) == TARBALL_SHA256:
            return tarball
        tarball.unlink()
    cache_dir.mkdir(parents=True, exist_ok=True)
    npm = shutil.which("npm")
    if npm is None:
        raise FetchError("npm is required to fetch the pinned @octokit/openapi package")
    completed = subprocess.run(
        [npm, "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", str(cache_dir), "--silent"],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0 or not tarball.exists():
        raise FetchError(f"npm pack {PACKAGE}@{VERSION} failed: {completed.stderr.strip()[-500:]}")
    digest = _sha256(tarball.read_bytes())
    if digest != TARBALL_SHA256:
        tarball.unlink()
        raise FetchError(f"tarball sha256 {digest} != pinned {TARBALL_SHA256}")
    return tarball


def count_operations(document: dict[str, Any]) -> int:
    """Number of (path, HTTP method) operations in an OpenAPI document."""
    return sum(1 for item in document.get("paths", {}).values() for method in item if method in HTTP_METHODS)


def load_github_description(cache_dir: Path = CACHE_DIR) -> GitHubDescription:
    """Fetch (if needed), verify and parse the full dereferenced GitHub description."""
    tarball = fetch_tarball(cache_dir)
    with tarfile.open(tarball, "r:gz") as archive:
        member = archive.extractfile(DOCUMENT_MEMBER)
        if member is None:
            raise FetchError(f"{DOCUMENT_MEMBER} missing from {tarball.name}")
        raw = member.read()
    digest = _sha256(raw)
    if digest != DOCUMENT_SHA256:
        raise FetchError(f"{DOCUMENT_MEMBER} sha256 {digest} != pinned {DOCUMENT_SHA256}")
    document = json.loads(raw)
    count = count_operations(document)
    if count != OPERATION_COUNT:
        raise FetchError(f"expected {OPERATION_COUNT} operations, found {count}")
    return GitHubDescription(raw=raw, document=document, sha256=digest)


def build_extract(
    full: GitHubDescription, operations: tuple[str, ...] = EXTRACT_OPERATIONS
) -> dict[str, Any]:
    """A valid OpenAPI document holding only ``operations``, copied verbatim from ``full``.

    Path items keep only the selected methods (and path-level ``parameters``, if any); top-level
    ``openapi``, ``info`` and ``servers`` are kept, ``tags`` is narrowed to the tags in use. Operations
    keep the full document's path order so FastMCP names them as it would in the full server.
    """
    wanted = set(operations)
    paths: dict[str, Any] = {}
    used_tags: set[str] = set()
    for path, item in full.document["paths"].items():
        kept = {
            method: operation
            for method, operation in item.items()
            if method in HTTP_METHODS and operation.get("operationId") in wanted
        }
        if not kept:
            continue
        if "parameters" in item:
            kept = {"parameters": item["parameters"], **kept}
        paths[path] = kept
        for operation in kept.values():
            if isinstance(operation, dict):
                used_tags.update(operation.get("tags", []))
                wanted.discard(operation.get("operationId", ""))
    if wanted:
        raise FetchError(f"operations not found in the full description: {sorted(wanted)}")
    document = full.document
    return {
        "openapi": document["openapi"],
        "info": document["info"],
        "servers": document["servers"],
        "tags": [tag for tag in document.get("tags", []) if tag.get("name") in used_tags],
        "paths": paths,
        "x-agent-connector-extract": {
            "package": PACKAGE,
            "version": VERSION,
            "tarball_sha256": TARBALL_SHA256,
            "document": DOCUMENT_MEMBER,
            "document_sha256": full.sha256,
            "document_operation_count": OPERATION_COUNT,
            "operations": list(operations),
            "note": "Operations copied verbatim from the full document; regenerate with "
            "`python -m scripts.github_openapi extract`. Tests use this file's own bytes as source bytes.",
        },
    }


def encode_extract(extract: dict[str, Any]) -> bytes:
    """Deterministic file bytes for the extract: compact JSON, because indenting the deeply nested
    schemas nearly doubles the file (980 KB instead of ~520 KB) and the file is generated, not edited."""
    return (json.dumps(extract, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def _cmd_fetch(_: argparse.Namespace) -> int:
    full = load_github_description()
    sizes = sorted(
        (
            (len(json.dumps(operation, separators=(",", ":"))), operation["operationId"])
            for item in full.document["paths"].values()
            for method, operation in item.items()
            if method in HTTP_METHODS
        ),
        reverse=True,
    )
    print(f"{PACKAGE}@{VERSION} tarball sha256 {TARBALL_SHA256} (verified)")
    print(f"{DOCUMENT_MEMBER}: {len(full.raw):,} bytes, sha256 {full.sha256}, {OPERATION_COUNT} operations")
    for size, operation_id in sizes[:3]:
        print(f"  {operation_id}: {size:,} bytes (compact JSON of the operation object)")
    return 0


def _cmd_extract(args: argparse.Namespace) -> int:
    encoded = encode_extract(build_extract(load_github_description()))
    if args.check:
        if not EXTRACT_PATH.exists() or EXTRACT_PATH.read_bytes() != encoded:
            print(f"stale: {EXTRACT_PATH.relative_to(REPO_ROOT)}", file=sys.stderr)
            return 1
        print(f"up to date: {EXTRACT_PATH.relative_to(REPO_ROOT)}")
        return 0
    EXTRACT_PATH.parent.mkdir(parents=True, exist_ok=True)
    EXTRACT_PATH.write_bytes(encoded)
    print(f"wrote {EXTRACT_PATH.relative_to(REPO_ROOT)}: {len(encoded):,} bytes, sha256 {_sha256(encoded)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.github_openapi", description=(__doc__ or "").split("\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("fetch", help="download and verify the pinned package, print stats").set_defaults(
        run=_cmd_fetch
    )
    extract = commands.add_parser("extract", help="write the embedded extract (package data)")
    extract.add_argument("--check", action="store_true", help="exit 1 if the committed extract is stale")
    extract.set_defaults(run=_cmd_extract)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except FetchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
