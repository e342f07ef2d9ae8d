"""Tool-poisoning checks: instructions aimed at the model or at other tools, hidden in skill
metadata (steering phrases, invisible or bidi characters, encoded blobs, tool shadowing).

Regexes on purpose: this is a security check over metadata, not intent routing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_WORDS = r"(?:\W+\w+){0,4}?\W+"  # up to four words in between
_STEERING = [
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"\b(?:ignore|disregard|forget|override|bypass)\b{_WORDS}"
        r"(?:instructions?|rules|guidelines|prompts?|directives|guardrails|polic(?:y|ies))\b",
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+)?"
        r"(?:above|preceding)\b",
        r"\bsystem\s+prompt\b",
        r"\b(?:your|the)\s+(?:system|developer)\s+(?:instructions|message)\b",
        r"\bnew\s+instructions\s*:",
        r"\byou\s+are\s+now\b",
        r"\balways\s+(?:call|invoke)\b",
        r"\byou\s+(?:must|should|need\s+to|have\s+to)\s+(?:always\s+|first\s+)?(?:call|invoke)\b",
        r"\b(?:always|must|should|first)\s+(?:call|invoke|use|run)\s+"
        r"(?:this|the|that|another|other|every|each|all)?\s*(?:tools?|skills?|functions?)\b",
        r"\b(?:before|after|instead\s+of)\s+(?:calling|using|invoking|running)\s+"
        r"(?:any|every|each|another|other)\s+(?:other\s+)?(?:tools?|skills?|functions?)\b",
        r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|alert|mention|reveal|disclose|show|let)\b"
        rf"{_WORDS}(?:user|human|operator)s?\b",
        r"\bwithout\s+(?:telling|informing|alerting|notifying)\s+(?:the\s+)?"
        r"(?:user|human|operator)s?\b",
        rf"\b(?:hide|conceal)\b{_WORDS}from\s+(?:the\s+)?(?:user|human|operator)s?\b",
        r"~/\.|\bid_rsa\b|\.ssh/|/etc/passwd|\bmcp\.json\b",
        r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>",  # hidden tags: <IMPORTANT>, <system>, ...
        r"<!--|<\|[^|<>]{1,40}\|>|\[/?(?:INST|SYS)\]",
    )
]
_BLOB = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=])")
_INVISIBLE = [
    (0x200B, 0x200F),
    (0x2060, 0x2064),
    (0xFEFF, 0xFEFF),
    (0xE0000, 0xE007F),
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2066, 0x2069),  # bidi isolates
    (0x00AD, 0x00AD),
]
_VERB = r"(?:call|calls|calling|invoke|invokes|invoking|use|uses|using|run|runs|running)"


def poisoning_problems(
    text: str, *, other_names: Iterable[str] = (), redirect_span: tuple[int, int] | None = None
) -> list[str]:
    """Instructions aimed at the model or at other tools hidden in ``text``.

    A name of another skill next to call/invoke/use is tool shadowing, except inside the
    description's ``NOT for:`` section (``redirect_span``), where "use other_skill instead"
    is the metadata pointing the scorer elsewhere.
    """
    problems: list[str] = []
    for offset, char in enumerate(text):
        code = ord(char)
        if any(low <= code <= high for low, high in _INVISIBLE):
            label = unicodedata.name(char, "unnamed")
            problems.append(f"invisible character U+{code:04X} ({label}) at offset {offset}")
            break
    for pattern in _STEERING:
        match = pattern.search(text)
        if match:
            problems.append(f"instruction aimed at the model: {match.group(0)!r}")
    for match in _BLOB.finditer(text):
        blob = match.group(0)
        if _looks_encoded(blob) and not _in_url(text, match.start()):
            problems.append(f"encoded blob of {len(blob)} characters: {blob[:16]!r}...")
            break
    for name in sorted(set(other_names)):
        # A plain-word name (no underscore) counts only when quoted, so "use search" in prose
        # is not mistaken for a skill called search.
        quoted = rf"[`'\"]{re.escape(name)}[`'\"]"
        target = rf"(?:{quoted}|\b{re.escape(name)}\b)" if "_" in name else quoted
        pattern = re.compile(rf"\b{_VERB}\s+(?:the\s+)?{target}", re.IGNORECASE)
        for match in pattern.finditer(text):
            start = match.start()
            if redirect_span is None or not redirect_span[0] <= start < redirect_span[1]:
                problems.append(f"steers another skill ({name}): {match.group(0)!r}")
                break
    return problems


def _looks_encoded(blob: str) -> bool:
    # Base64 mixes cases and digits; a long path or word run does not, and has many slashes.
    body = blob.rstrip("=")
    mixed = any(c.isupper() for c in body) and any(c.islower() for c in body)
    return mixed and any(c.isdigit() for c in body) and body.count("/") <= len(body) // 10


def _in_url(text: str, offset: int) -> bool:
    # A webhook or API path is data the skill calls, not text the model reads as orders.
    token = re.search(r"\S*\Z", text[:offset])
    return token is not None and "://" in token.group(0)


def not_for_span(description: str) -> tuple[int, int] | None:
    match = re.search(r"not for:", description, re.IGNORECASE)
    if match is None:
        return None
    later = re.search(r"use when:", description[match.end() :], re.IGNORECASE)
    end = match.end() + later.start() if later else len(description)
    return match.start(), end
