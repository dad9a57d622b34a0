"""Generate the published JSON Schema artifacts of the disclosure wire models.

``python -m scripts.generate_schema_disclosure`` writes ``schemas/schema-manifest.schema.json`` and
``schemas/schema-fragment.schema.json`` from ``SchemaManifest.model_json_schema()`` and
``SchemaFragment.model_json_schema()``, and ``schemas/review-report.schema.json`` (the output of
``agent-connector review --json``) from ``ReviewReport.model_json_schema()``, and
``schemas/contract-lock.schema.json`` (``review --write-lock``) from ``ContractLock.model_json_schema()``,
``schemas/review-config-report.schema.json`` (``review --mcp-config FILE --json``) from
``ConfigReviewReport.model_json_schema()``, and ``schemas/gateway-check.schema.json``
(``gateway --check --json``) from ``GatewayCheck.model_json_schema()``.
Each artifact is also written to ``src/agent_connector_sdk/schemas/`` so the wheel ships it as package
data. ``--check`` writes nothing and exits 1 naming each stale file.

The manifest schema holds the shared identity as ``$defs/SchemaIdentity``; the fragment schema refers
to it by ``$id`` and adds only its own three fields, with ``unevaluatedProperties: false`` so unknown
fields still fail across the ``$ref``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from agent_connector_sdk.cli.disclose_report import DiscloseReport
from agent_connector_sdk.core.contracts.lock import ContractLock
from agent_connector_sdk.core.schema_disclosure import SchemaFragment, SchemaManifest
from agent_connector_sdk.gateway._evidence import GatewayCheck
from agent_connector_sdk.review.config_report import ConfigReviewReport
from agent_connector_sdk.review.report import ReviewReport

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
PACKAGED_SCHEMAS = ROOT / "src" / "agent_connector_sdk" / "schemas"
REVIEW_REPORT_ID = "urn:agent-connector-sdk:review-report:1"
CONTRACT_LOCK_ID = "urn:agent-connector-sdk:contract-lock:1"
CONFIG_REPORT_ID = "urn:agent-connector-sdk:review-config-report:1"
DISCLOSE_REPORT_ID = "urn:agent-connector-sdk:disclose-report:1"
GATEWAY_CHECK_ID = "urn:agent-connector-sdk:gateway-check:1"
DIALECT = "https://json-schema.org/draft/2020-12/schema"
MANIFEST_ID = "urn:agent-connector-sdk:schema-disclosure:schema-manifest:1"
FRAGMENT_ID = "urn:agent-connector-sdk:schema-disclosure:schema-fragment:1"
IDENTITY_REF = f"{MANIFEST_ID}#/$defs/SchemaIdentity"


def _object_schema(model_schema: dict[str, Any], names: list[str]) -> dict[str, Any]:
    properties = model_schema["properties"]
    return {
        "type": "object",
        "properties": {name: properties[name] for name in names},
        "required": [name for name in model_schema["required"] if name in names],
    }


def build_artifacts() -> dict[str, dict[str, Any]]:
    """Return ``file name -> schema`` for both artifacts."""
    manifest = SchemaManifest.model_json_schema()
    fragment = SchemaFragment.model_json_schema()
    identity_names = list(manifest["properties"])
    # The fragment must repeat the manifest's fields exactly; refuse to publish if the models drifted.
    for name in identity_names:
        if fragment["properties"].get(name) != manifest["properties"][name]:
            raise SystemExit(f"SchemaFragment.{name} differs from SchemaManifest.{name}")
    own_names = [name for name in fragment["properties"] if name not in identity_names]
    manifest_artifact = {
        "$schema": DIALECT,
        "$id": MANIFEST_ID,
        "title": "SchemaManifest",
        "description": inspect.cleandoc(SchemaManifest.__doc__ or ""),
        "$defs": {"SchemaIdentity": _object_schema(manifest, identity_names)},
        "$ref": "#/$defs/SchemaIdentity",
        "unevaluatedProperties": False,
    }
    fragment_artifact = {
        "$schema": DIALECT,
        "$id": FRAGMENT_ID,
        "title": "SchemaFragment",
        "description": inspect.cleandoc(SchemaFragment.__doc__ or ""),
        "$ref": IDENTITY_REF,
        **_object_schema(fragment, own_names),
        "unevaluatedProperties": False,
    }
    review_report = ReviewReport.model_json_schema()
    review_artifact = {
        "$schema": DIALECT,
        "$id": REVIEW_REPORT_ID,
        **{key: value for key, value in review_report.items() if key != "description"},
        "description": inspect.cleandoc(ReviewReport.__doc__ or ""),
    }
    contract_lock = ContractLock.model_json_schema()
    lock_artifact = {
        "$schema": DIALECT,
        "$id": CONTRACT_LOCK_ID,
        **{key: value for key, value in contract_lock.items() if key != "description"},
        "description": inspect.cleandoc(ContractLock.__doc__ or ""),
    }
    config_report = ConfigReviewReport.model_json_schema()
    config_artifact = {
        "$schema": DIALECT,
        "$id": CONFIG_REPORT_ID,
        **{key: value for key, value in config_report.items() if key != "description"},
        "description": inspect.cleandoc(ConfigReviewReport.__doc__ or ""),
    }
    gateway_check = GatewayCheck.model_json_schema()
    check_artifact = {
        "$schema": DIALECT,
        "$id": GATEWAY_CHECK_ID,
        **{key: value for key, value in gateway_check.items() if key != "description"},
        "description": inspect.cleandoc(GatewayCheck.__doc__ or ""),
    }
    disclose = DiscloseReport.model_json_schema()
    disclose_artifact = {
        "$schema": DIALECT,
        "$id": DISCLOSE_REPORT_ID,
        **{key: value for key, value in disclose.items() if key != "description"},
        "description": inspect.cleandoc(DiscloseReport.__doc__ or ""),
    }
    return {
        "disclose-report.schema.json": disclose_artifact,
        "review-config-report.schema.json": config_artifact,
        "schema-manifest.schema.json": manifest_artifact,
        "schema-fragment.schema.json": fragment_artifact,
        "review-report.schema.json": review_artifact,
        "contract-lock.schema.json": lock_artifact,
        "gateway-check.schema.json": check_artifact,
    }


def _shown(path: Path) -> Path:
    try:
        return path.relative_to(ROOT)
    except ValueError:
        return path


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed artifact is stale")
    args = parser.parse_args(argv)
    stale = []
    for name, schema in build_artifacts().items():
        text = render(schema)
        for path in (SCHEMAS / name, PACKAGED_SCHEMAS / name):
            if args.check:
                if not path.exists() or path.read_text(encoding="utf-8") != text:
                    stale.append(_shown(path))
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                print(f"wrote {_shown(path)}")
    for path in stale:
        print(f"stale artifact: {path} (run: python -m scripts.generate_schema_disclosure)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
