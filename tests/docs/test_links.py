"""Every relative link in README.md and docs/*.md names a file that exists and, with ``#anchor``, a
heading in it (GitHub's anchor rule), so moving a section cannot leave a dead link behind."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs.blocks import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (?P<title>.+)$", re.MULTILINE)
_FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchor(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped (``-`` and ``_`` kept), spaces to ``-``."""
    text = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = _FENCED.sub("", path.read_text(encoding="utf-8"))
    return {anchor(match["title"]) for match in _HEADING.finditer(text)}


def test_anchor_rule() -> None:
    assert anchor("The `--descriptor` file format") == "the---descriptor-file-format"
    assert anchor("Operator: review a server") == "operator-review-a-server"
    assert anchor("What stays the caller's") == "what-stays-the-callers"


def test_every_relative_link_resolves() -> None:
    dead = []
    for page in PAGES:
        text = _FENCED.sub("", page.read_text(encoding="utf-8"))
        for match in _LINK.finditer(text):
            target = match["target"]
            if re.match(r"^[a-z]+:", target):
                continue  # http(s), mailto: not checked offline
            file_part, _, fragment = target.partition("#")
            linked = (page.parent / file_part).resolve() if file_part else page
            if not linked.exists():
                dead.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                dead.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not dead, "\n".join(dead)
