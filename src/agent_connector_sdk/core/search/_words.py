"""Words of tool names and of requests: splitting, stop words, stemming, the request vocabulary (pure).

Tool names are identifiers (``list_issues_for_repo``, ``get-user``, ``listIssuesForRepo``,
``activity/list-watchers-for-repo``): :func:`name_words` splits them on every separator and at every
case change, so a model's "issues of a repo" meets the name's own words. Prose is split the same way
(descriptions quote identifiers too). Every word is then stemmed by the Snowball English stemmer, so
"watching" and "watch" or "repositories" and "repository" are one term.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Final

import snowballstemmer

__all__ = [
    "ABBREVIATIONS",
    "RELATED_WORDS",
    "STOP_WORDS",
    "name_words",
    "stem",
    "terms",
    "text_terms",
    "text_words",
]

# The words of an identifier or of prose, in one pass: separators (``_``, ``-``, ``/``, ``.``, spaces,
# punctuation) split, and so does every case change (``HTTPServer`` -> HTTP Server, ``listIssues2`` ->
# list Issues 2). Letters outside ASCII form words as they are. The alternatives are ordered for speed
# (a lower-case run, the commonest, first; the look-ahead tried only where a capital is not followed by
# a lower-case letter); they split exactly as "[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|..." does.
_WORD: Final = re.compile(r"[a-z]+|[A-Z][a-z]+|[A-Z]+(?=[A-Z][a-z])|[A-Z]+|\d+|[^\W\d_A-Za-z]+")
# Addresses say where a page is, not what a tool does ("https://docs.github.com/en/rest/...").
_ADDRESS: Final = re.compile(r"https?://\S*|\]\([^)\s]*\)")

MAX_WORDS: Final = 2_000


def name_words(identifier: str) -> list[str]:
    """The words of an identifier, lower-cased: snake, kebab, camel and Pascal case, paths, digits.

    >>> name_words("listIssuesForRepo")
    ['list', 'issues', 'for', 'repo']
    >>> name_words("activity/list-watchers_for-repo")
    ['activity', 'list', 'watchers', 'for', 'repo']
    """
    # One lower-casing of the joined words (C speed) instead of one call per word.
    return " ".join(_WORD.findall(identifier, 0, 64 * MAX_WORDS)[:MAX_WORDS]).lower().split()


def text_words(text: str) -> list[str]:
    """The words of prose: as :func:`name_words` (descriptions quote identifiers), web addresses left
    out, bounded."""
    if "](" in text or "://" in text:
        text = _ADDRESS.sub(" ", text)
    return name_words(text)


# Words that say nothing about which tool is meant: English function words and the politeness and
# framing of a request ("can you please show me ..."). Kept small: a word an API uses as a name
# ("get", "list", "all", "new") is not a stop word.
_STOP_TEXT: Final = """
a about above after again against am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor
not of off on once only or other our ours ourselves out over own same she should so some such than that
the their theirs them themselves then there these they this those through to too under until up very was
we were what when where which while who whom why will with would you your yours yourself yourselves
please want wants need needs like let lets tell give us able something someone somebody anything
thing things way also currently already via using use s t d ll re ve m
"""
STOP_WORDS: Final = frozenset(_STOP_TEXT.split())

# Short forms requests use for what APIs spell out (and the reverse). Applied to request words before
# stemming; the expansion joins the request, it does not replace the word.
ABBREVIATIONS: Final[dict[str, tuple[str, ...]]] = {
    "repo": ("repository",),
    "repos": ("repositories",),
    "org": ("organization",),
    "orgs": ("organizations",),
    "pr": ("pull", "request"),
    "prs": ("pull", "requests"),
    "dm": ("direct", "message"),
    "msg": ("message",),
    "info": ("information", "details"),
    "config": ("configuration",),
    "env": ("environment",),
    "auth": ("authentication", "authorization"),
    "db": ("database",),
    "url": ("link",),
    "lat": ("latitude",),
    "lng": ("longitude",),
    "lon": ("longitude",),
    "temp": ("temperature",),
    "email": ("mail",),
    "e-mail": ("email",),
    "ssh": ("ssh", "key"),
    "gpg": ("gpg", "key"),
    "ci": ("workflow", "check"),
    "gist": ("gist",),
}

# Groups of words a request and an API use for the same act or object. A request word brings in the
# other words of its groups at a reduced weight, and only where the catalog uses them (the index looks
# them up in its own vocabulary), so a group never adds noise to a catalog that lacks its words.
RELATED_WORDS: Final[tuple[tuple[str, ...], ...]] = (
    ("get", "fetch", "retrieve", "show", "view", "see", "read", "look", "display", "check", "lookup"),
    ("get", "information", "details", "detail", "describe", "info"),
    ("authenticated", "logged", "signed", "current"),
    ("gist", "snippet", "paste"),
    ("quota", "remaining", "left", "limit"),
    ("list", "all", "show", "enumerate", "every", "browse"),
    ("create", "make", "add", "new", "open", "start", "post", "submit", "write", "generate"),
    ("delete", "remove", "erase", "drop", "destroy", "discard", "unset", "clear", "revoke"),
    ("update", "change", "edit", "modify", "set", "rename", "patch", "replace", "alter"),
    ("search", "find", "lookup", "query", "locate", "discover"),
    ("send", "post", "message", "notify", "tell", "deliver"),
    ("download", "export", "save", "archive", "tarball", "zipball"),
    ("upload", "import", "attach"),
    ("run", "execute", "trigger", "dispatch", "rerun", "launch"),
    ("cancel", "stop", "abort", "halt"),
    ("star", "favorite", "like", "bookmark"),
    ("watch", "subscribe", "follow", "notification", "subscription"),
    ("user", "person", "people", "account", "member", "someone", "profile"),
    ("repository", "repo", "project", "codebase"),
    ("organization", "org", "company"),
    ("issue", "bug", "ticket", "problem"),
    ("comment", "reply", "remark", "note"),
    ("merge", "combine", "integrate"),
    ("branch", "ref"),
    ("release", "version", "tag"),
    ("collaborator", "contributor", "maintainer", "teammate"),
    ("invitation", "invite"),
    ("block", "ban"),
    ("lock", "freeze"),
    ("label", "tag"),
    ("secret", "credential", "token", "password"),
    ("key", "credential"),
    ("commit", "change"),
    ("weather", "forecast", "temperature"),
    ("geocode", "coordinate", "latitude", "longitude", "address", "location"),
    ("translate", "translation", "language"),
    ("price", "cost", "quote"),
    ("calendar", "event", "schedule", "meeting", "appointment"),
    ("email", "mail", "inbox"),
    ("file", "document", "content"),
    ("image", "picture", "photo"),
    ("count", "number", "statistic", "stats", "metric"),
    ("size", "length"),
    ("permission", "access", "role", "right"),
    ("rate", "limit", "quota"),
)


_STEMMER: Final = snowballstemmer.stemmer("english")
# The stemmer object keeps state between calls: one word at a time across threads.
_STEMMER_LOCK: Final = threading.Lock()
# Word -> stem, for every word seen (a catalog's and its requests' vocabulary: tens of thousands of
# short strings at most; bounded by clearing, which only costs recomputation).
_STEMS: dict[str, str] = {}
_MAX_STEMS: Final = 200_000


def stem(word: str) -> str:
    """The Snowball (Porter 2) English stem of a lower-case word; digits and short words unchanged."""
    known = _STEMS.get(word)
    if known is not None:
        return known
    if len(word) <= 2 or not word.isalpha():
        stemmed = word
    else:
        with _STEMMER_LOCK:
            stemmed = _STEMMER.stemWord(word)
    if len(_STEMS) >= _MAX_STEMS:
        _STEMS.clear()
    _STEMS[word] = stemmed
    return stemmed


def terms(words: list[str]) -> list[str]:
    """The index terms of words: stop words dropped, the rest stemmed."""
    stems = _STEMS
    return [stems.get(word) or stem(word) for word in words if word not in STOP_WORDS]


@lru_cache(maxsize=4_096)
def text_terms(text: str) -> tuple[str, ...]:
    """The index terms of a text (memoized: catalogs repeat argument descriptions by the hundred)."""
    return tuple(terms(text_words(text)))
