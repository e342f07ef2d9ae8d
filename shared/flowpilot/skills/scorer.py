"""Rank skills for an intent from their own metadata: BM25 over name, summary and `Use when:`,
minus matches on `NOT for:`, plus a small bonus for recent successful use.

No keyword routing lives here (law 1): a wrong pick is fixed in the skill's description (law 2).
Everything query-independent is computed once in SkillIndex.__init__, so rank() only walks the
postings of the intent's own terms.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flowpilot.skills.spec import split_description

K1 = 1.2
B = 0.75
# Name, summary and Use-when add to relevance; a NOT-for match subtracts from it.
FIELD_WEIGHTS: dict[str, float] = {"name": 2.0, "summary": 1.0, "use_when": 1.5, "not_for": -0.8}
FIELDS = tuple(FIELD_WEIGHTS)
SUCCESS_BONUS = 0.3
_MIN_SCORE = 1e-9  # below this a sum of opposite contributions is float noise, not relevance

STOPWORDS = frozenset(
    """a about after all also am an and any are as at be been before being but by can could did
    do does doing for from had has have he her here him his how i if in into is it its just may
    me might must my no not of on or our ours please she should so some than that the their them
    then there these they this those to too us very via was we were what when where which who
    whom why will with would you your yours""".split()
)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
_VOWELS = frozenset("aeiouy")
_SIBILANT_ENDINGS = ("ss", "x", "z", "ch", "sh")
_KEEP_DOUBLE = frozenset("lszf")  # "billing" -> "bill", "staffing" -> "staff"


def _stem(word: str) -> str:
    """Strip plural and -ing/-ed endings, conservatively: better to miss than to conflate."""
    if len(word) <= 3:
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(_SIBILANT_ENDINGS):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]  # "meetings" goes on to lose its "ing" too
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and not word.endswith("eed"):
            base = word[: -len(suffix)]
            if len(base) >= 2 and not _VOWELS.isdisjoint(base):
                if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in _KEEP_DOUBLE:
                    base = base[:-1]  # "planning" -> "plan", but "adding" stays "add"
                return base
    return word


def tokenize(text: str) -> list[str]:
    """Lowercase stemmed words without stopwords; snake_case and camelCase split into parts."""
    words = _WORD.findall(_CAMEL.sub(" ", text).lower())
    return [_stem(w) for w in words if len(w) > 1 and w not in STOPWORDS]


def _key(token: str) -> str:
    # Index key: a final silent "e" is dropped so "schedule" meets "scheduling" ("schedul")
    # without tokenize() having to guess which stems need their "e" back.
    return token[:-1] if len(token) >= 3 and token.endswith("e") else token


@dataclass(frozen=True)
class SkillDoc:
    name: str
    description: str
    enabled: bool = True
    trust_level: str = "auto"
    module_enabled: bool = True

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> SkillDoc:
        """From an agent_skills row (module_enabled comes from a join and may be absent)."""
        return cls(
            name=str(row["name"]),
            description=str(row.get("description") or ""),
            enabled=bool(row.get("enabled", True)),
            trust_level=str(row.get("trust_level") or "auto"),
            module_enabled=bool(row.get("module_enabled", True)),
        )

    @property
    def offerable(self) -> bool:
        return self.enabled and self.module_enabled and self.trust_level.lower() != "blocked"


@dataclass(frozen=True)
class ScoredSkill:
    name: str
    score: float
    matched: dict[str, list[str]]  # field -> the intent's terms found in it


def _field_texts(skill: SkillDoc) -> tuple[str, str, str, str]:
    summary, use_when, not_for = split_description(skill.description)
    return skill.name, summary, use_when, not_for


class SkillIndex:
    """An inverted index over offerable skills; blocked or disabled ones are never indexed."""

    def __init__(self, skills: Iterable[SkillDoc]) -> None:
        # Sorting by name makes the index independent of input order, and lets the doc index
        # stand in for the name in tie-breaks.
        docs = sorted((s for s in skills if s.offerable), key=lambda s: s.name)
        names = [s.name for s in docs]
        if len(set(names)) != len(names):
            dupes = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"duplicate skill names: {', '.join(dupes)}")
        self._names: tuple[str, ...] = tuple(names)
        self._position = {name: i for i, name in enumerate(names)}

        field_counts = [
            [Counter(_key(t) for t in tokenize(text)) for text in _field_texts(doc)] for doc in docs
        ]
        self._field_terms: tuple[tuple[frozenset[str], ...], ...] = tuple(
            tuple(frozenset(c) for c in counts) for counts in field_counts
        )

        weights: dict[str, dict[int, float]] = {}
        n = len(docs)
        for f, field in enumerate(FIELDS):
            lengths = [sum(counts[f].values()) for counts in field_counts]
            total = sum(lengths)
            if total == 0:
                continue
            avgdl = total / n
            df = Counter(term for counts in field_counts for term in counts[f])
            idf = {term: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for term, d in df.items()}
            for doc, counts in enumerate(field_counts):
                norm = K1 * (1.0 - B + B * lengths[doc] / avgdl)
                for term, tf in counts[f].items():
                    bm25 = idf[term] * tf * (K1 + 1.0) / (tf + norm)
                    per_doc = weights.setdefault(term, {})
                    per_doc[doc] = per_doc.get(doc, 0.0) + FIELD_WEIGHTS[field] * bm25
        # term -> {doc: summed field-weighted BM25}: rank() touches only its terms' entries.
        self._postings: dict[str, dict[int, float]] = {
            term: dict(sorted(per_doc.items())) for term, per_doc in weights.items()
        }

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._position

    def rank(
        self, intent: str, *, k: int = 8, recent_successes: Mapping[str, int] | None = None
    ) -> list[ScoredSkill]:
        """The top k skills for the intent, best first; only skills with positive scores."""
        terms: dict[str, str] = {}  # index key -> the intent's own token, first occurrence
        for token in tokenize(intent):
            terms.setdefault(_key(token), token)
        # Longest postings first: the first is copied at C speed instead of walked. The order
        # depends only on the index and the intent, so every float sum is always the same.
        lists = sorted(
            (self._postings[key] for key in terms if key in self._postings), key=len, reverse=True
        )
        if not lists or k <= 0:
            return []
        scores = dict(lists[0])
        for postings in lists[1:]:
            for doc, weight in postings.items():
                scores[doc] = scores.get(doc, 0.0) + weight
        for name, successes in (recent_successes or {}).items():
            doc = self._position.get(name, -1)
            # History only breaks ties among relevant skills; it never makes one relevant.
            if successes > 0 and scores.get(doc, 0.0) > _MIN_SCORE:
                scores[doc] += SUCCESS_BONUS * math.log1p(successes)
        # The k-th best score, found in C, filters the candidates before the tie-breaking sort.
        floor = max(heapq.nlargest(k, scores.values())[-1], _MIN_SCORE)
        best = sorted((-s, d) for d, s in scores.items() if s >= floor)[:k]
        query = list(terms.items())
        return [
            ScoredSkill(self._names[d], -neg, self._matched(d, query))
            for neg, d in best
            if -neg > _MIN_SCORE
        ]

    def _matched(self, doc: int, query: list[tuple[str, str]]) -> dict[str, list[str]]:
        matched: dict[str, list[str]] = {}
        for field, terms in zip(FIELDS, self._field_terms[doc], strict=True):
            hits = [token for key, token in query if key in terms]
            if hits:
                matched[field] = hits
        return matched
