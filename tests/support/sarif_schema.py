"""The official SARIF 2.1.0 JSON schema, fetched from the npm registry at test time (never hand-written).

Microsoft's ``@microsoft/jest-sarif`` package ships the OASIS schema as
``lib/schemas/sarif-2.1.0-rtm.5.json`` (the schema SchemaStore publishes as ``sarif-2.1.0.json`` and
GitHub code scanning validates uploads with). ``npm pack`` fetches the pinned tarball; its SHA-256 and
the schema's are checked before use, and both are cached in the system temp directory.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

PACKAGE = "@microsoft/jest-sarif"
VERSION = "1.0.0-beta.0"
TARBALL_SHA256 = "748e2c3d1a842e7bb258416685c7ea3a0da40005b72267b2052c2856d48ad102"
MEMBER = "package/lib/schemas/sarif-2.1.0-rtm.5.json"
SCHEMA_SHA256 = "2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8"
CACHE = Path(tempfile.gettempdir()) / "agent-connector-test-cache"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def official_sarif_schema() -> dict[str, Any]:
    """The verified schema (raises ``RuntimeError`` when it cannot be fetched or does not verify)."""
    tarball = CACHE / "microsoft-jest-sarif-1.0.0-beta.0.tgz"
    if not tarball.exists() or _sha256(tarball.read_bytes()) != TARBALL_SHA256:
        CACHE.mkdir(parents=True, exist_ok=True)
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is needed to fetch the official SARIF schema")
        done = subprocess.run(
            [npm, "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", str(CACHE), "--silent"],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        if done.returncode != 0 or not tarball.exists():
            raise RuntimeError(f"npm pack {PACKAGE}@{VERSION} failed: {done.stderr.strip()[-300:]}")
        if _sha256(tarball.read_bytes()) != TARBALL_SHA256:
            tarball.unlink()
            raise RuntimeError("the SARIF schema package does not match its pinned sha256")
    with tarfile.open(tarball, "r:gz") as archive:
        member = archive.extractfile(MEMBER)
        if member is None:
            raise RuntimeError(f"{MEMBER} is missing from the package")
        data = member.read()
    if _sha256(data) != SCHEMA_SHA256:
        raise RuntimeError("the SARIF schema does not match its pinned sha256")
    schema: dict[str, Any] = json.loads(data)
    return schema
