"""Agent skills shipped with the SDK (package data), served over the MCP Skills extension (SEP-2640).

``mcp-contract-reviewer/SKILL.md`` is the reviewer skill: a flat procedure whose every step names the
``agent-connector`` command that does it. :func:`reviewer_skill` loads it from the installed package
(exact bytes; FastMCP computes each file's size and SHA-256 digest for the listing), and
:func:`skills_provider` serves it: ``agent-connector serve`` (the lab) adds that provider, which also
registers ``skills/list`` and ``skills/get``.
"""

from __future__ import annotations

from typing import Final

from fastmcp.skills import Skill
from fastmcp.skills.provider import SkillCatalogProvider

__all__ = ["REVIEWER_SKILL", "reviewer_skill", "skills_provider"]

REVIEWER_SKILL: Final = "mcp-contract-reviewer"


def reviewer_skill() -> Skill:
    """The reviewer skill as the wheel ships it (``agent_connector_sdk/skills/mcp-contract-reviewer``)."""
    return Skill.from_package("agent_connector_sdk", f"skills/{REVIEWER_SKILL}")


def skills_provider() -> SkillCatalogProvider:
    """A FastMCP provider serving the SDK's skills at ``skill://{name}/SKILL.md``."""
    return SkillCatalogProvider([reviewer_skill()])
