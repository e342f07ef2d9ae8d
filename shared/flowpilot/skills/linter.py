"""The skill pack linter: metadata defects that make a skill unsafe, unroutable or unrunnable.

Each finding names its source, its skill and a stable rule id, so CI output and the Cockpit can
both show it. The tool-poisoning rule uses regexes on purpose: it is a security check over
metadata, not intent routing (architecture law 1 is about routing).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flowpilot.errors import FlowPilotError
from flowpilot.skills.handlers import handler_problem
from flowpilot.skills.poisoning import not_for_span, poisoning_problems
from flowpilot.skills.spec import BUILTIN_PACK, SkillPack, parse_pack, split_description

MIN_DESCRIPTION = 30

# The JSON Schema subset OpenAI strict mode accepts (structured-outputs guide, "Supported
# schemas"): the types, anyOf, enum/const, local $ref/$defs, annotations, and only these
# type-specific constraints. default, minLength, maxLength, allOf, oneOf, not, if/then/else,
# patternProperties, uniqueItems, minProperties, ... are rejected or ignored.
STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "definitions",
        "description",
        "title",
        "pattern",
        "format",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
STRICT_MAX_DEPTH = 10


@dataclass(frozen=True)
class Finding:
    source: str
    skill: str
    rule: str
    message: str

    def line(self) -> str:
        message = " ".join(self.message.split())
        return f"{self.source}: {self.skill}: {self.rule}: {message}"


@dataclass(frozen=True)
class _Skill:
    """What the rules read, whether it came from a pack or a registry row."""

    name: str
    description: str
    instructions: str
    parameters: Any
    handler: str
    config: dict[str, Any]
    side_effects: str
    trust: str
    trust_explicit: bool | None  # None: unknown (registry rows do not record it)


# ---- entry points -----------------------------------------------------------------------


def lint_pack(
    pack: SkillPack,
    *,
    source: str,
    raw: Mapping[str, Any] | None = None,
    other_names: Iterable[str] = (),
) -> list[Finding]:
    """Lint one parsed pack. ``raw`` is its YAML mapping, which tells explicit trust apart."""
    raw_skills = raw.get("skills") if isinstance(raw, Mapping) else None
    skills = []
    for index, spec in enumerate(pack.skills):
        explicit = spec.trust_explicit
        if isinstance(raw_skills, list) and index < len(raw_skills):
            entry = raw_skills[index]
            if isinstance(entry, Mapping) and entry.get("name") == spec.name:
                explicit = "trust_level" in entry
        skills.append(
            _Skill(
                name=spec.name,
                description=spec.description,
                instructions=spec.instructions,
                parameters=spec.parameters,
                handler=spec.handler,
                config=spec.config,
                side_effects=spec.side_effects,
                trust=spec.effective_trust,
                trust_explicit=explicit,
            )
        )
    return _lint(skills, source=source, other_names=other_names)


def lint_rows(rows: Sequence[Mapping[str, Any]], *, source: str = "registry") -> list[Finding]:
    """Lint ``agent_skills`` rows with the pack rules, except write_auto_implicit."""
    skills = [
        _Skill(
            name=str(row.get("name") or "-"),
            description=str(row.get("description") or ""),
            instructions=str(row.get("instructions") or ""),
            parameters=row.get("parameters"),
            handler=str(row.get("handler") or ""),
            config=dict(row.get("config") or {}),
            side_effects=str(row.get("side_effects") or "read"),
            trust=str(row.get("trust_level") or ""),
            trust_explicit=None,
        )
        for row in rows
    ]
    return _lint(skills, source=source, other_names=())


def lint_files(paths: Sequence[Path]) -> list[Finding]:
    """Lint pack files together: a name must be unique across all of them."""
    import yaml

    findings: list[Finding] = []
    loaded: list[tuple[str, SkillPack, Any]] = []
    for path in paths:
        source = str(path)
        try:
            text = path.read_text(encoding="utf-8")
            pack = parse_pack(text, source=source)
        except (OSError, FlowPilotError) as exc:
            message = getattr(exc, "message", str(exc)).removeprefix(f"{source}: ")
            findings.append(Finding(source, "-", "invalid_pack", message))
            continue
        loaded.append((source, pack, yaml.safe_load(text)))

    all_names = {skill.name for _, pack, _ in loaded for skill in pack.skills}
    first_source: dict[str, str] = {}
    for source, pack, raw in loaded:
        findings += lint_pack(pack, source=source, raw=raw, other_names=all_names)
        for name in dict.fromkeys(skill.name for skill in pack.skills):
            if name in first_source:
                message = f"{name!r} is also defined in {first_source[name]}"
                findings.append(Finding(source, name, "duplicate_name", message))
            else:
                first_source[name] = source
    return findings


def lint_builtin() -> list[Finding]:
    return lint_files([BUILTIN_PACK])


# ---- the rules --------------------------------------------------------------------------


def _lint(skills: Sequence[_Skill], *, source: str, other_names: Iterable[str]) -> list[Finding]:
    known = {skill.name for skill in skills} | set(other_names) | _builtin_names()
    findings: list[Finding] = []
    seen: set[str] = set()
    for skill in skills:
        problems = list(_skill_problems(skill, known - {skill.name}))
        if skill.name in seen:
            problems.append(("duplicate_name", f"{skill.name!r} appears more than once"))
        seen.add(skill.name)
        findings += [Finding(source, skill.name, rule, message) for rule, message in problems]
    return findings


def _skill_problems(skill: _Skill, other_names: set[str]) -> Iterator[tuple[str, str]]:
    description = skill.description.strip()
    if len(description) < MIN_DESCRIPTION:
        yield (
            "description_too_short",
            f"description has {len(description)} characters; at least {MIN_DESCRIPTION} needed",
        )
    _, use_when, not_for = split_description(description)
    for rule, marker, section in (
        ("missing_use_when", "Use when:", use_when),
        ("missing_not_for", "NOT for:", not_for),
    ):
        if marker.lower() not in description.lower():
            yield rule, f"description has no {marker!r} section"
        elif not section:
            yield rule, f"the {marker!r} section of the description is empty"

    schema_problem = parameters_problem(skill.parameters)
    if schema_problem is not None:
        yield "invalid_parameters", schema_problem
    else:
        for problem in strict_schema_problems(skill.parameters):
            yield "not_strict_compatible", problem

    try:
        handler_message = handler_problem(skill.handler, skill.config)
    except Exception as exc:  # a handler module that fails to import is a finding, not a crash
        handler_message = f"handler {skill.handler!r} cannot load: {type(exc).__name__}: {exc}"
    if handler_message is not None:
        yield "unresolvable_handler", handler_message

    if skill.side_effects == "write" and skill.trust == "auto" and skill.trust_explicit is False:
        yield (
            "write_auto_implicit",
            "a write skill runs with trust auto although the pack does not state trust_level: auto",
        )

    texts = [("description", skill.description), ("instructions", skill.instructions)]
    texts += _schema_texts(skill.parameters, "parameters $")
    for field, text in texts:
        exempt = not_for_span(text) if field == "description" else None
        for problem in poisoning_problems(text, other_names=other_names, redirect_span=exempt):
            yield "tool_poisoning", f"{field}: {problem}"


def _builtin_names() -> set[str]:
    # Tenant packs must not shadow the built-in skills either; a broken builtin pack is
    # reported by lint_builtin, not here.
    try:
        return {skill.name for skill in parse_pack(BUILTIN_PACK.read_text(encoding="utf-8")).skills}
    except (OSError, FlowPilotError):
        return set()


# ---- parameters -------------------------------------------------------------------------


def parameters_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a valid JSON Schema, or None."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    if not isinstance(schema, dict):
        return f"parameters must be a JSON Schema object, not {type(schema).__name__}"
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        where = "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in exc.path)
        return f"{where}: {exc.message}"
    return None


def strict_schema_problems(schema: dict[str, Any]) -> list[str]:
    """Why ``schema`` cannot be a tool's parameters in OpenAI strict mode, one per JSON path."""
    problems: list[str] = []
    if schema.get("type") != "object":
        problems.append("$: the top level must have type object (not anyOf or another type)")
    _strict(schema, "$", schema, 0, problems)
    return problems


def _strict(node: Any, path: str, root: dict[str, Any], depth: int, out: list[str]) -> None:
    if not isinstance(node, dict):
        out.append(f"{path}: must be a schema object, not {node!r}")
        return
    if depth > STRICT_MAX_DEPTH:
        out.append(f"{path}: nests deeper than {STRICT_MAX_DEPTH} levels")
        return
    for keyword in sorted(set(node) - STRICT_KEYWORDS):
        out.append(f"{path}: keyword {keyword!r} is not supported in strict mode")
    ref = node.get("$ref")
    if ref is not None and not (isinstance(ref, str) and _resolves(ref, root)):
        out.append(f"{path}: $ref {ref!r} must point inside this schema ('#...')")
    if "format" in node and node["format"] not in STRICT_FORMATS:
        out.append(f"{path}: format {node['format']!r} is not supported in strict mode")

    types = node.get("type")
    types = types if isinstance(types, list) else [types]
    properties = node.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    if "object" in types or properties:
        if node.get("additionalProperties") is not False:
            out.append(f"{path}: objects must set additionalProperties: false")
        names = list(properties)
        required = node.get("required") or []
        missing = [name for name in names if name not in required]
        if missing:
            out.append(f"{path}: required must list every property; missing {', '.join(missing)}")
        unknown = [name for name in required if name not in names]
        if unknown:
            out.append(f"{path}: required names unknown properties {', '.join(unknown)}")
        for name in names:
            _strict(properties[name], f"{path}.properties.{name}", root, depth + 1, out)
    if "items" in node:
        _strict(node["items"], f"{path}.items", root, depth + 1, out)
    for index, branch in enumerate(node.get("anyOf") or []):
        _strict(branch, f"{path}.anyOf[{index}]", root, depth + 1, out)
    for defs in ("$defs", "definitions"):
        for name, sub in (node.get(defs) or {}).items():
            _strict(sub, f"{path}.{defs}.{name}", root, depth + 1, out)


def _resolves(ref: str, root: dict[str, Any]) -> bool:
    if not ref.startswith("#"):
        return False
    target: Any = root
    for part in ref[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or part not in target:
            return False
        target = target[part]
    return True


def _schema_texts(node: Any, path: str) -> list[tuple[str, str]]:
    """The description and title strings inside a schema: tool poisoning hides there too."""
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("description", "title") and isinstance(value, str):
                found.append((f"{path}.{key}", value))
            else:
                found += _schema_texts(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _schema_texts(value, f"{path}[{index}]")
    return found


# ---- tool poisoning ---------------------------------------------------------------------
