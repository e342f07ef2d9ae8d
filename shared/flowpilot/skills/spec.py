"""What a skill is, as a skill pack (YAML) declares it and the registry stores it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from flowpilot.errors import InvalidRequest

TrustLevel = Literal["auto", "notify", "approve", "blocked"]
SideEffects = Literal["read", "write"]
NAME_PATTERN = r"^[a-z][a-z0-9_]{1,63}$"
BUILTIN_PACK = Path(__file__).with_name("builtin.yaml")

_USE_WHEN = re.compile(r"use when:", re.IGNORECASE)
_NOT_FOR = re.compile(r"not for:", re.IGNORECASE)


class SqlTemplate(BaseModel):
    """A bounded SQL template: fixed, parameterised, tenant bound automatically."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    max_rows: int = Field(100, ge=1, le=10_000)
    timeout_ms: int = Field(2_000, ge=10, le=60_000)


class SkillSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    description: str
    instructions: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {
            "type": "object",
            "properties": {},
            "required": [],
            "additionalProperties": False,
        }
    )
    handler: str = Field(pattern=r"^(internal|webhook|lambda|sql|mcp|a2a):.+$")
    category: str = "general"
    side_effects: SideEffects = "read"
    trust_level: TrustLevel | None = None
    mcp_exposed: bool = False
    groups: list[str] = Field(default_factory=list)
    # Skills of an optional module appear only while that module is on; "core" is always on.
    module: str = "core"
    enabled: bool = True
    # Handler settings: a sql: skill's template, a webhook's timeout and size cap, ...
    config: dict[str, Any] = Field(default_factory=dict)

    @property
    def trust_explicit(self) -> bool:
        return self.trust_level is not None

    @property
    def effective_trust(self) -> TrustLevel:
        """Reads default to auto, writes to notify, unless the pack says otherwise."""
        if self.trust_level is not None:
            return self.trust_level
        return "auto" if self.side_effects == "read" else "notify"

    @property
    def handler_kind(self) -> str:
        return self.handler.split(":", 1)[0]

    @property
    def handler_target(self) -> str:
        return self.handler.split(":", 1)[1]

    def row(self) -> dict[str, Any]:
        """The registry row's values, with the version hash of everything that matters."""
        values = {
            "name": self.name,
            "description": self.description.strip(),
            "instructions": self.instructions.strip(),
            "parameters": self.parameters,
            "handler": self.handler,
            "category": self.category,
            "side_effects": self.side_effects,
            "trust_level": self.effective_trust,
            "mcp_exposed": self.mcp_exposed,
            "groups": sorted(self.groups),
            "module": self.module,
            "enabled": self.enabled,
            "config": self.config,
        }
        canonical = json.dumps(values, sort_keys=True, separators=(",", ":"))
        values["version_hash"] = hashlib.sha256(canonical.encode()).hexdigest()[:16]
        return values


class SkillPack(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pack: str = Field(min_length=1, max_length=64)
    skills: list[SkillSpec] = Field(default_factory=list)
    sql_templates: dict[str, SqlTemplate] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _attach_sql_templates(self) -> SkillPack:
        # A sql: skill carries its template in its config, so execution needs only the row.
        for skill in self.skills:
            if skill.handler_kind == "sql" and skill.handler_target in self.sql_templates:
                template = self.sql_templates[skill.handler_target]
                skill.config = {**skill.config, "sql": template.model_dump()}
        return self


def split_description(description: str) -> tuple[str, str, str]:
    """(summary, use-when text, not-for text) of a description with the two markers."""
    text = description.strip()
    use = _USE_WHEN.search(text)
    nope = _NOT_FOR.search(text)
    marks = sorted((m for m in (use, nope) if m is not None), key=lambda m: m.start())
    summary_end = marks[0].start() if marks else len(text)
    summary = text[:summary_end].strip()

    def section(match: re.Match[str] | None) -> str:
        if match is None:
            return ""
        later = [m.start() for m in marks if m.start() > match.start()]
        return text[match.end() : later[0] if later else len(text)].strip()

    return summary, section(use), section(nope)


def parse_pack(text: str, *, source: str = "<pack>") -> SkillPack:
    """Parse a YAML skill pack; a malformed one is a clear InvalidRequest."""
    import yaml

    try:
        data = yaml.safe_load(text)
        return SkillPack.model_validate(data)
    except yaml.YAMLError as exc:
        raise InvalidRequest(f"{source}: not valid YAML: {exc}", code="invalid_pack") from None
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()]
        raise InvalidRequest(
            f"{source}: " + "; ".join(problems), code="invalid_pack", details=problems
        ) from None


def load_pack(path: Path) -> SkillPack:
    return parse_pack(path.read_text(encoding="utf-8"), source=str(path))


def builtin_pack() -> SkillPack:
    return load_pack(BUILTIN_PACK)
