"""A docker-free ``sam local invoke``: run one function of template.yaml in this process.

The function's handler, code folder, timeout, memory and environment come from the template
(the resource merged over ``Globals.Function``), exactly as SAM would read them. Environment
values resolve the way a developer expects from ``sam local invoke --env-vars``: plain values and
parameter defaults apply, the process environment wins over the template, explicit overrides
win over both, and anything only CloudFormation can resolve (resource ARNs, secrets) is left out.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from flowpilot.config import reset_settings
from flowpilot.errors import FlowPilotError

__all__ = [
    "FunctionSpec",
    "InvokeError",
    "LambdaContext",
    "function_spec",
    "invoke_function",
    "load_template",
]

_SERVERLESS_FUNCTION = "AWS::Serverless::Function"
_DEFAULT_TIMEOUT_S = 3  # SAM's defaults when neither the function nor Globals set them
_DEFAULT_MEMORY_MB = 128
_REGION = "us-east-1"
_ACCOUNT = "123456789012"


class InvokeError(FlowPilotError):
    """The function cannot be invoked locally: unknown id, bad template or missing handler."""

    code = "invoke_error"


# ------------------------------------------------------------------ template loading


class CloudFormationLoader(yaml.SafeLoader):
    """A safe YAML loader that reads CloudFormation's short tags as the long form's data."""


def _construct_tag(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> Any:
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    elif isinstance(node, yaml.MappingNode):
        value = loader.construct_mapping(node, deep=True)
    else:  # pragma: no cover - YAML has no other node kinds
        raise yaml.constructor.ConstructorError(None, None, "unknown node", node.start_mark)
    if tag_suffix in {"Ref", "Condition"}:
        return {tag_suffix: value}
    if tag_suffix == "GetAtt" and isinstance(value, str):
        # The short form "Resource.Attribute" is a two-item list in the long form.
        value = value.split(".", 1)
    return {f"Fn::{tag_suffix}": value}


CloudFormationLoader.add_multi_constructor("!", _construct_tag)


def load_template(path: Path) -> dict[str, Any]:
    """Parse a CloudFormation or SAM template; short tags become their long-form mappings."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvokeError(f"cannot read template {path}: {exc.strerror}") from exc
    try:
        document = yaml.load(text, Loader=CloudFormationLoader)
    except yaml.YAMLError as exc:
        raise InvokeError(f"template {path} is not valid YAML: {exc}") from exc
    if not isinstance(document, dict):
        raise InvokeError(f"template {path} is not a mapping")
    return document


# ------------------------------------------------------------------ function resolution


@dataclass(frozen=True)
class FunctionSpec:
    """What SAM would run for one function, with the environment it could resolve locally."""

    logical_id: str
    handler: str
    code_uri: Path
    timeout_s: int
    memory_mb: int
    environment: dict[str, str] = field(default_factory=dict)

    @property
    def module_file(self) -> Path:
        module, _, _ = self.handler.rpartition(".")
        return self.code_uri / (module.replace(".", "/") + ".py")

    @property
    def handler_name(self) -> str:
        return self.handler.rpartition(".")[2]


def _as_int(value: Any, default: int, what: str, logical_id: str) -> int:
    if value is None:
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvokeError(f"{logical_id}: {what} {value!r} is not a number") from None


def _scalar(value: Any) -> str | None:
    """A template value as the string Lambda would see, if it is a plain scalar."""
    if isinstance(value, bool):  # before int: bool is an int
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _resolve_env_value(value: Any, parameters: Mapping[str, Any]) -> str | None:
    """A plain value, or a ``!Ref`` to a parameter with a non-empty default; else None."""
    plain = _scalar(value)
    if plain is not None:
        return plain
    if isinstance(value, dict) and set(value) == {"Ref"} and isinstance(value["Ref"], str):
        parameter = parameters.get(value["Ref"])
        if isinstance(parameter, dict):
            default = _scalar(parameter.get("Default"))
            if default:
                return default
    return None


def _environment(variables: Any, parameters: Mapping[str, Any]) -> dict[str, str]:
    if not isinstance(variables, dict):
        return {}
    resolved: dict[str, str] = {}
    for name, value in variables.items():
        text = _resolve_env_value(value, parameters)
        if text is not None:
            resolved[str(name)] = text
    return resolved


def _variables(properties: Mapping[str, Any]) -> Mapping[str, Any]:
    environment = properties.get("Environment")
    if isinstance(environment, dict) and isinstance(environment.get("Variables"), dict):
        variables: Mapping[str, Any] = environment["Variables"]
        return variables
    return {}


def function_spec(
    logical_id: str, template: Mapping[str, Any], *, base_dir: Path = Path(".")
) -> FunctionSpec:
    """Resolve one ``AWS::Serverless::Function`` of ``template`` (paths relative to base_dir)."""
    resources = template.get("Resources") or {}
    functions = {
        name: resource
        for name, resource in resources.items()
        if isinstance(resource, dict) and resource.get("Type") == _SERVERLESS_FUNCTION
    }
    if logical_id not in functions:
        known = ", ".join(sorted(functions)) or "none"
        raise InvokeError(
            f"no function {logical_id!r} in the template; known functions: {known}",
            code="unknown_function",
            details={"known": sorted(functions)},
        )
    globals_section = template.get("Globals") or {}
    global_props: Mapping[str, Any] = globals_section.get("Function") or {}
    props: Mapping[str, Any] = functions[logical_id].get("Properties") or {}
    # SAM merges Globals under the resource; Environment.Variables merge key by key.
    merged = {**global_props, **props}
    variables = {**_variables(global_props), **_variables(props)}

    handler = merged.get("Handler")
    code_uri = merged.get("CodeUri")
    if not isinstance(handler, str) or "." not in handler:
        raise InvokeError(f"{logical_id}: Handler must look like 'module.function'")
    if not isinstance(code_uri, str):
        raise InvokeError(f"{logical_id}: CodeUri must be a local folder to invoke locally")
    parameters = template.get("Parameters") or {}
    return FunctionSpec(
        logical_id=logical_id,
        handler=handler,
        code_uri=(base_dir / code_uri).resolve(),
        timeout_s=_as_int(merged.get("Timeout"), _DEFAULT_TIMEOUT_S, "Timeout", logical_id),
        memory_mb=_as_int(merged.get("MemorySize"), _DEFAULT_MEMORY_MB, "MemorySize", logical_id),
        environment=_environment(variables, parameters),
    )


# ------------------------------------------------------------------ the invocation


@dataclass
class LambdaContext:
    """The parts of Lambda's context object that handlers and Powertools read."""

    function_name: str
    memory_limit_in_mb: int
    timeout_s: int
    function_version: str = "$LATEST"
    invoked_function_arn: str = ""
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = ""
    log_stream_name: str = ""
    client_context: Any = None
    identity: Any = None
    _deadline: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        if not self.invoked_function_arn:
            self.invoked_function_arn = (
                f"arn:aws:lambda:{_REGION}:{_ACCOUNT}:function:{self.function_name}"
            )
        if not self.log_group_name:
            self.log_group_name = f"/aws/lambda/{self.function_name}"
        if not self.log_stream_name:
            day = time.strftime("%Y/%m/%d", time.gmtime())
            self.log_stream_name = f"{day}/[{self.function_version}]{uuid.uuid4().hex}"
        if not self._deadline:
            self._deadline = time.monotonic() + self.timeout_s

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _module_name(code_uri: Path) -> str:
    # Every function's file is app.py: a name per folder keeps them from replacing each other.
    slug = re.sub(r"\W", "_", code_uri.name) or "root"
    return f"flowpilot_fn_{slug}_app"


def _load_handler(spec: FunctionSpec) -> Any:
    path = spec.module_file
    if not path.is_file():
        raise InvokeError(f"{spec.logical_id}: handler file {path} does not exist")
    name = _module_name(spec.code_uri)
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise InvokeError(f"{spec.logical_id}: cannot import {path}")
    module: ModuleType = importlib.util.module_from_spec(module_spec)
    # A fresh module per call, like a fresh `sam local invoke` container; registered while it
    # runs so dataclasses, pickling and relative lookups inside it work.
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    handler = getattr(module, spec.handler_name, None)
    if not callable(handler):
        raise InvokeError(f"{spec.logical_id}: {path} has no callable {spec.handler_name!r}")
    return handler


@contextmanager
def _applied_environment(values: Mapping[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    reset_settings()
    try:
        yield
    finally:
        for name, previous in saved.items():
            if previous is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = previous
        reset_settings()


def invocation_environment(
    spec: FunctionSpec, env_overrides: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Variables to set for one call: template < process environment < overrides."""
    runtime = {
        "AWS_LAMBDA_FUNCTION_NAME": spec.logical_id,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
    }
    from_template = {**runtime, **spec.environment}
    values = {name: value for name, value in from_template.items() if name not in os.environ}
    values.update(env_overrides or {})
    return values


def invoke_function(
    logical_id: str,
    event: Any,
    *,
    template_path: Path = Path("template.yaml"),
    env_overrides: Mapping[str, str] | None = None,
) -> Any:
    """Run ``logical_id``'s handler on ``event`` in this process and return its result.

    Handler exceptions propagate unchanged; problems finding the handler raise InvokeError.
    """
    template = load_template(template_path)
    spec = function_spec(logical_id, template, base_dir=template_path.parent)
    with _applied_environment(invocation_environment(spec, env_overrides)):
        handler = _load_handler(spec)
        context = LambdaContext(
            function_name=spec.logical_id,
            memory_limit_in_mb=spec.memory_mb,
            timeout_s=spec.timeout_s,
        )
        return handler(event, context)
