"""Findings: what a host reports (instead of rejecting) when a server breaks a *project* rule.

Two classes of rule (see the README's rule table):

* ``spec`` — the specification says MUST (or the result is unusable): rejected in every profile;
* ``project`` — the spec says SHOULD or is silent and this project is stricter: our own servers obey
  it; a host records a :class:`Finding` by default and rejects only in the ``strict`` profile.

A finding names a rule, a category and a JSON pointer; its message names fields, never values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Finding", "RuleClass"]

RuleClass = Literal["spec", "project"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One project-rule deviation that did not stop the result (or the tool) from being used."""

    rule: str
    """Stable rule id, e.g. ``text-serialization`` (the README's rule table lists them)."""
    category: str
    """The category a strict host would have rejected with (e.g. ``missing_text_serialization``)."""
    message: str
    path: str | None = None
