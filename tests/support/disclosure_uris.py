"""Guessed and mangled disclosure URIs: every one must be refused exactly like an unknown resource."""

from __future__ import annotations

from agent_connector_sdk.core.schema_disclosure import SchemaDisclosure

BASE_REFERENCE_URI = "https://example.invalid/not-a-disclosure"


def guessed_uris(disclosure: SchemaDisclosure, other_alias: str) -> dict[str, str]:
    """Name -> URI for the issue's list of guesses, derived from a real, readable disclosure."""
    manifest = disclosure.manifest
    alias, digest, count = manifest.alias, manifest.schema_sha256, manifest.fragment_count
    assert count >= 2, "variants need a multi-fragment disclosure"
    base = f"schema-disclosure://tools/{alias}/{digest}"
    good_manifest = manifest.manifest_uri
    good_fragment = f"{base}/fragments/1"
    swapped_case = alias.swapcase()
    assert swapped_case != alias
    wrong_digest = ("0" if digest[0] != "0" else "1") + digest[1:]
    return {
        "wrong digest": f"schema-disclosure://tools/{alias}/{wrong_digest}/manifest",
        "digest of another tool": f"schema-disclosure://tools/{alias}/{'ab' * 32}/manifest",
        "other alias, this digest": f"schema-disclosure://tools/{other_alias}/{digest}/manifest",
        "alias differing only in case": f"schema-disclosure://tools/{swapped_case}/{digest}/manifest",
        "upper-case digest": f"schema-disclosure://tools/{alias}/{digest.upper()}/manifest",
        "index 01": f"{base}/fragments/01",
        "index -1": f"{base}/fragments/-1",
        "index +1": f"{base}/fragments/+1",
        "index 1.0": f"{base}/fragments/1.0",
        "index space 1": f"{base}/fragments/ 1",
        "index arabic-indic": f"{base}/fragments/\u0661",
        "index full-width": f"{base}/fragments/\uff11",
        "index = count": f"{base}/fragments/{count}",
        "huge index": f"{base}/fragments/{10**40}",
        "empty index": f"{base}/fragments/",
        "percent-encoded index": f"{base}/fragments/%31",
        "percent-encoded slash": f"{base}/fragments%2F1",
        "percent-encoded manifest": f"{base}/%6Danifest",
        "percent-encoded alias letter": f"schema-disclosure://tools/%{ord(alias[0]):02X}{alias[1:]}/{digest}/manifest",
        "percent-encoded scheme colon": good_manifest.replace(
            "schema-disclosure:", "schema-disclosure%3A", 1
        ),
        "extra path segment (manifest)": f"{good_manifest}/extra",
        "extra path segment (fragment)": f"{good_fragment}/0",
        "trailing slash": f"{good_manifest}/",
        "double slash": f"schema-disclosure://tools//{alias}/{digest}/manifest",
        "dot segment": f"schema-disclosure://tools/./{alias}/{digest}/manifest",
        "dot-dot segment": f"schema-disclosure://tools/x/../{alias}/{digest}/manifest",
        "query string": f"{good_manifest}?x=1",
        "empty query": f"{good_manifest}?",
        "fragment query string": f"{good_fragment}?index=0",
        "uri fragment": f"{good_manifest}#top",
        "upper-case scheme": good_manifest.replace("schema-disclosure:", "SCHEMA-DISCLOSURE:", 1),
        "upper-case host": good_manifest.replace("//tools/", "//TOOLS/", 1),
        "other scheme https": good_manifest.replace("schema-disclosure:", "https:", 1),
        "other scheme file": good_manifest.replace("schema-disclosure://", "file:///", 1),
        "missing authority slashes": good_manifest.replace("schema-disclosure://", "schema-disclosure:", 1),
        "trailing newline": good_manifest + "\n",
        "leading space": " " + good_manifest,
        "fragment path without index": f"{base}/fragments",
        "fragments as manifest": f"{base}/fragment/0",
    }
