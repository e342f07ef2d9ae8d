"""``lambda:<function name or ARN>``: a synchronous invoke of the tenant's own function.

The function receives ``{"tenant_id", "skill", "arguments", "actor", "run_id"}`` and its JSON
return value is the skill's result. The client makes no automatic retries: a timed-out write
may already have happened, so whether to try again is the engine's decision, not botocore's.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import TYPE_CHECKING, Any

from flowpilot.skills.context import SkillContext, SkillFailed

if TYPE_CHECKING:
    from mypy_boto3_lambda import LambdaClient

DEFAULT_TIMEOUT_S = 60.0
# AWS's own pattern for FunctionName: a name, a partial ARN or a full ARN, with a qualifier.
_FUNCTION = re.compile(
    r"(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\d{1}:)?(\d{12}:)?"
    r"(function:)?([a-zA-Z0-9\-_]+)(:(\$LATEST|[a-zA-Z0-9\-_]+))?"
)


@cache
def _client(read_timeout_s: float) -> LambdaClient:
    import boto3
    from botocore.config import Config

    config = Config(
        connect_timeout=5,
        read_timeout=read_timeout_s,
        retries={"total_max_attempts": 1},
    )
    return boto3.client("lambda", config=config)


def reset_client() -> None:
    """Forget the cached clients (tests point AWS_ENDPOINT_URL somewhere new)."""
    _client.cache_clear()


def run(ctx: SkillContext, arguments: dict[str, Any]) -> Any:
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        ConnectTimeoutError,
        EndpointConnectionError,
        ReadTimeoutError,
    )

    function = ctx.target
    timeout_s = float(ctx.config.get("timeout_s", DEFAULT_TIMEOUT_S))
    payload = {
        "tenant_id": str(ctx.tenant_id),
        "skill": str(ctx.skill["name"]),
        "arguments": arguments,
        "actor": ctx.actor.model_dump(mode="json"),
        "run_id": str(ctx.run_id) if ctx.run_id else None,
    }
    try:
        response = _client(timeout_s).invoke(
            FunctionName=function,
            InvocationType="RequestResponse",
            Payload=json.dumps(payload, default=str).encode(),
        )
        raw = response["Payload"].read()
    except ReadTimeoutError:
        raise SkillFailed(
            f"{function} did not answer within {timeout_s:g} seconds", code="timeout"
        ) from None
    except (EndpointConnectionError, ConnectTimeoutError) as exc:
        raise SkillFailed(f"could not reach Lambda: {exc}", code="unreachable") from None
    except ClientError as exc:
        error = exc.response.get("Error", {})
        raise SkillFailed(
            f"invoking {function} failed: {error.get('Code', 'error')}: {error.get('Message', '')}",
            code="lambda_error",
            details={"aws_code": error.get("Code")},
        ) from None
    except BotoCoreError as exc:
        raise SkillFailed(f"invoking {function} failed: {exc}", code="lambda_error") from None
    result = _decode(function, raw)
    if response.get("FunctionError"):
        raise _function_error(function, response["FunctionError"], result)
    return result


def _decode(function: str, raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError:
        raise SkillFailed(
            f"{function} returned a payload that is not JSON", code="lambda_error"
        ) from None


def _function_error(function: str, kind: str, result: Any) -> SkillFailed:
    detail = result if isinstance(result, dict) else {}
    message = str(detail.get("errorMessage") or result or "no error message")
    error_type = detail.get("errorType")
    prefix = f"{error_type}: " if error_type else ""
    return SkillFailed(
        f"{function} failed: {prefix}{message}",
        code="lambda_error",
        details={"function_error": kind, "error_type": error_type},
    )


def problem(target: str, config: dict[str, Any]) -> str | None:
    if not target or len(target) > 170 or not _FUNCTION.fullmatch(target):
        return f"{target!r} is not a Lambda function name or ARN"
    return None
