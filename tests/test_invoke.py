"""flowpilot.local.invoke: a docker-free ``sam local invoke`` on small templates of our own."""

from __future__ import annotations

import os
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from flowpilot.config import get_settings
from flowpilot.local.invoke import InvokeError, function_spec, invoke_function, load_template

ROOT = Path(__file__).resolve().parents[1]

TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Parameters:
  Stage:
    Type: String
    Default: tmpl-stage
  EmptyParam:
    Type: String
    Default: ""
  Secret:
    Type: String
    NoEcho: true
Globals:
  Function:
    Runtime: python3.12
    Timeout: 7
    MemorySize: 256
    Environment:
      Variables:
        FPT_PLAIN: from-globals
        FPT_OVERRIDDEN_BY_FUNCTION: globals
        FPT_NUMBER: 5
        FPT_BOOL: true
        FLOWPILOT_STAGE: !Ref Stage
        FPT_EMPTY_PARAM: !Ref EmptyParam
        FPT_NO_DEFAULT: !Ref Secret
        FPT_RESOURCE: !Ref Queue
        FPT_ARN: !GetAtt Queue.Arn
        FPT_SUB: !Sub "${Queue}-x"
        FPT_IF: !If [SomeCondition, a, b]
        FPT_PROCESS_WINS: template
        FPT_OVERRIDE_WINS: template
Resources:
  Queue:
    Type: AWS::SQS::Queue
  AlphaFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/alpha/
      Handler: app.lambda_handler
      Environment:
        Variables:
          FPT_OVERRIDDEN_BY_FUNCTION: function
  BetaFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/beta/
      Handler: app.lambda_handler
      MemorySize: 1024
      Timeout: 30
  MissingFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/missing/
      Handler: app.lambda_handler
"""

ENV_NAMES = [
    "FPT_PLAIN",
    "FPT_OVERRIDDEN_BY_FUNCTION",
    "FPT_NUMBER",
    "FPT_BOOL",
    "FLOWPILOT_STAGE",
    "FPT_EMPTY_PARAM",
    "FPT_NO_DEFAULT",
    "FPT_RESOURCE",
    "FPT_ARN",
    "FPT_SUB",
    "FPT_IF",
    "FPT_PROCESS_WINS",
    "FPT_OVERRIDE_WINS",
    "FPT_ONLY_OVERRIDE",
]

ENV_HANDLER = """\
import os

from flowpilot.config import get_settings

IMPORTED_STAGE = os.environ.get("FLOWPILOT_STAGE")
NAMES = {names!r}


def lambda_handler(event, context):
    return {{
        "env": {{name: os.environ[name] for name in NAMES if name in os.environ}},
        "imported_stage": IMPORTED_STAGE,
        "settings_stage": get_settings().stage,
        "event": event,
    }}
"""


@pytest.fixture
def template_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE, encoding="utf-8")
    return path


def write_handler(template_path: Path, folder: str, source: str) -> None:
    code = template_path.parent / "functions" / folder
    code.mkdir(parents=True, exist_ok=True)
    (code / "app.py").write_text(textwrap.dedent(source), encoding="utf-8")


def test_environment_precedence(template_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_handler(template_path, "alpha", ENV_HANDLER.format(names=ENV_NAMES))
    monkeypatch.setenv("FPT_PROCESS_WINS", "process")
    monkeypatch.setenv("FPT_OVERRIDE_WINS", "process")

    result = invoke_function(
        "AlphaFunction",
        {"ping": 1},
        template_path=template_path,
        env_overrides={"FPT_OVERRIDE_WINS": "override", "FPT_ONLY_OVERRIDE": "yes"},
    )

    assert result["event"] == {"ping": 1}
    assert result["env"] == {
        "FPT_PLAIN": "from-globals",
        "FPT_OVERRIDDEN_BY_FUNCTION": "function",
        "FPT_NUMBER": "5",
        "FPT_BOOL": "true",
        "FLOWPILOT_STAGE": "tmpl-stage",
        "FPT_PROCESS_WINS": "process",
        "FPT_OVERRIDE_WINS": "override",
        "FPT_ONLY_OVERRIDE": "yes",
    }


def test_settings_follow_the_invocation_environment(template_path: Path) -> None:
    write_handler(template_path, "alpha", ENV_HANDLER.format(names=ENV_NAMES))
    assert get_settings().stage == "local"  # cached before the call, on purpose

    result = invoke_function("AlphaFunction", {}, template_path=template_path)

    assert result["settings_stage"] == "tmpl-stage"
    assert result["imported_stage"] == "tmpl-stage"  # module code runs under the function's env
    assert get_settings().stage == "local"


def test_environment_is_restored_after_the_call(
    template_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_handler(template_path, "alpha", ENV_HANDLER.format(names=ENV_NAMES))
    monkeypatch.setenv("FPT_OVERRIDE_WINS", "before")
    before = dict(os.environ)

    invoke_function(
        "AlphaFunction",
        {},
        template_path=template_path,
        env_overrides={"FPT_OVERRIDE_WINS": "during", "FPT_ONLY_OVERRIDE": "during"},
    )

    assert dict(os.environ) == before


def test_unknown_logical_id_lists_the_known_functions(template_path: Path) -> None:
    with pytest.raises(InvokeError) as caught:
        invoke_function("NopeFunction", {}, template_path=template_path)
    message = str(caught.value)
    assert "NopeFunction" in message
    assert "AlphaFunction" in message and "BetaFunction" in message
    assert "Queue" not in caught.value.details["known"]


def test_missing_handler_file_is_an_invoke_error(template_path: Path) -> None:
    with pytest.raises(InvokeError, match="does not exist"):
        invoke_function("MissingFunction", {}, template_path=template_path)


def test_handler_exception_propagates_and_env_is_restored(template_path: Path) -> None:
    write_handler(
        template_path,
        "alpha",
        """\
        class SkillBlew(RuntimeError):
            pass


        def lambda_handler(event, context):
            raise SkillBlew("boom " + event["why"])
        """,
    )
    before = dict(os.environ)

    with pytest.raises(RuntimeError, match="boom disk full") as caught:
        invoke_function("AlphaFunction", {"why": "disk full"}, template_path=template_path)

    assert type(caught.value).__name__ == "SkillBlew"
    assert not isinstance(caught.value, InvokeError)
    assert dict(os.environ) == before


def test_context_object(template_path: Path) -> None:
    write_handler(
        template_path,
        "beta",
        """\
        import time


        def lambda_handler(event, context):
            first = context.get_remaining_time_in_millis()
            time.sleep(0.05)
            return {
                "function_name": context.function_name,
                "function_version": context.function_version,
                "invoked_function_arn": context.invoked_function_arn,
                "memory_limit_in_mb": context.memory_limit_in_mb,
                "aws_request_id": context.aws_request_id,
                "log_group_name": context.log_group_name,
                "log_stream_name": context.log_stream_name,
                "remaining": [first, context.get_remaining_time_in_millis()],
            }
        """,
    )

    first = invoke_function("BetaFunction", {}, template_path=template_path)
    second = invoke_function("BetaFunction", {}, template_path=template_path)

    assert first["function_name"] == "BetaFunction"
    assert first["function_version"] == "$LATEST"
    assert first["invoked_function_arn"].startswith("arn:aws:lambda:")
    assert first["invoked_function_arn"].endswith(":function:BetaFunction")
    assert first["memory_limit_in_mb"] == 1024  # the function's own beats Globals
    assert uuid.UUID(first["aws_request_id"]).version == 4
    assert first["aws_request_id"] != second["aws_request_id"]
    assert first["log_group_name"] == "/aws/lambda/BetaFunction"
    assert "[$LATEST]" in first["log_stream_name"]
    start, later = first["remaining"]
    assert 25_000 < start <= 30_000  # counts down from the function's Timeout
    assert later <= start - 40


def test_two_app_modules_stay_apart(template_path: Path) -> None:
    source = """\
    WHO = {who!r}


    def lambda_handler(event, context):
        return {{"who": WHO, "module": __name__}}
    """
    write_handler(template_path, "alpha", source.format(who="alpha"))
    write_handler(template_path, "beta", source.format(who="beta"))

    alpha = invoke_function("AlphaFunction", {}, template_path=template_path)
    beta = invoke_function("BetaFunction", {}, template_path=template_path)
    alpha_again = invoke_function("AlphaFunction", {}, template_path=template_path)

    assert alpha["who"] == alpha_again["who"] == "alpha"
    assert beta["who"] == "beta"
    assert alpha["module"] != beta["module"]
    assert alpha["module"] != "app" and beta["module"] != "app"
    assert "app" not in sys.modules or not hasattr(sys.modules["app"], "WHO")


def test_globals_merge_under_the_function(template_path: Path) -> None:
    template = load_template(template_path)
    spec = function_spec("AlphaFunction", template, base_dir=template_path.parent)
    assert spec.timeout_s == 7
    assert spec.memory_mb == 256
    assert spec.code_uri == (template_path.parent / "functions" / "alpha").resolve()
    assert spec.environment["FPT_OVERRIDDEN_BY_FUNCTION"] == "function"
    assert "FPT_RESOURCE" not in spec.environment


def test_real_template_functions() -> None:
    template = load_template(ROOT / "template.yaml")
    code_uris = {
        "ChatCompletionFunction": "functions/chat_completion",
        "AgentExecuteFunction": "functions/agent_execute",
        "HeartbeatFunction": "functions/flowpilot_heartbeat",
        "SignalPlannerFunction": "functions/signal_planner",
    }
    functions = {
        name
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }
    assert functions == set(code_uris)
    for logical_id, code_uri in code_uris.items():
        spec = function_spec(logical_id, template, base_dir=ROOT)
        assert spec.handler == "app.lambda_handler"
        assert spec.code_uri == ROOT / code_uri
        assert spec.module_file == ROOT / code_uri / "app.py"
        # Secrets and resource names never resolve locally; plain settings do.
        assert "DATABASE_URL_SECRET_ARN" not in spec.environment
        assert spec.environment["FLOWPILOT_DB_PREPARE_THRESHOLD"] == "none"


def test_short_tags_load_as_long_form(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            A: !Ref X
            B: !GetAtt Res.Arn
            C: !Sub ["${A}-${B}", {A: !Ref Y, B: !Select [0, !GetAZs ""]}]
            D: !If [Cond, !Join ["", [a, b]], !Ref AWS::NoValue]
            E: !Condition Cond
            F: !Base64 text
            G: !Not [!Equals [!Ref X, ""]]
            H: !FindInMap [M, !Ref AWS::Region, k]
            I: !ImportValue other-stack-output
            J: !Split [",", "a,b"]
            """
        ),
        encoding="utf-8",
    )
    data: dict[str, Any] = load_template(path)
    assert data["A"] == {"Ref": "X"}
    assert data["B"] == {"Fn::GetAtt": ["Res", "Arn"]}
    assert data["C"] == {
        "Fn::Sub": ["${A}-${B}", {"A": {"Ref": "Y"}, "B": {"Fn::Select": [0, {"Fn::GetAZs": ""}]}}]
    }
    assert data["D"] == {
        "Fn::If": ["Cond", {"Fn::Join": ["", ["a", "b"]]}, {"Ref": "AWS::NoValue"}]
    }
    assert data["E"] == {"Condition": "Cond"}
    assert data["F"] == {"Fn::Base64": "text"}
    assert data["G"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "X"}, ""]}]}
    assert data["H"] == {"Fn::FindInMap": ["M", {"Ref": "AWS::Region"}, "k"]}
    assert data["I"] == {"Fn::ImportValue": "other-stack-output"}
    assert data["J"] == {"Fn::Split": [",", "a,b"]}
