"""template.yaml: lint-clean, and shaped the way ARCHITECTURE.md section 2 says."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flowpilot.local.invoke import function_spec, load_template
from flowpilot.testing.events import load_event

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE_PATH = ROOT / "template.yaml"
FUNCTIONS = {
    "ChatCompletionFunction",
    "AgentExecuteFunction",
    "HeartbeatFunction",
    "SignalPlannerFunction",
}


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template(TEMPLATE_PATH)


def _resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: res for name, res in template["Resources"].items() if res["Type"] == kind}


def _props(template: dict[str, Any], logical_id: str) -> dict[str, Any]:
    properties: dict[str, Any] = template["Resources"][logical_id]["Properties"]
    return properties


def _events(template: dict[str, Any], logical_id: str, kind: str) -> list[dict[str, Any]]:
    events = _props(template, logical_id).get("Events", {})
    return [event["Properties"] for event in events.values() if event["Type"] == kind]


def _policy_text(template: dict[str, Any], logical_id: str) -> str:
    return json.dumps(_props(template, logical_id).get("Policies", []))


def _references(node: Any, name: str) -> list[Any]:
    """Every ``{"Ref": name}`` (or ``${name}`` inside a Sub) below ``node``."""
    found: list[Any] = []
    if isinstance(node, dict):
        if node.get("Ref") == name:
            found.append(node)
        for value in node.values():
            found.extend(_references(value, name))
    elif isinstance(node, list):
        for value in node:
            found.extend(_references(value, name))
    elif isinstance(node, str) and f"${{{name}}}" in node:
        found.append(node)
    return found


def test_cfn_lint_reports_nothing() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from cfnlint.runner import main; sys.exit(main())",
            str(TEMPLATE_PATH),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == ""


def test_exactly_the_four_functions(template: dict[str, Any]) -> None:
    assert set(_resources(template, "AWS::Serverless::Function")) == FUNCTIONS


def test_globals_run_every_function_on_the_layer(template: dict[str, Any]) -> None:
    function_globals = template["Globals"]["Function"]
    assert function_globals["Runtime"] == "python3.12"
    assert function_globals["Architectures"] == ["arm64"]
    assert function_globals["MemorySize"] == 512
    assert function_globals["Layers"] == [{"Ref": "FlowPilotLayer"}]
    variables = function_globals["Environment"]["Variables"]
    assert variables["FLOWPILOT_DB_PREPARE_THRESHOLD"] == "none"
    assert variables["DATABASE_URL_SECRET_ARN"] == {"Ref": "DatabaseUrlSecret"}
    layer = template["Resources"]["FlowPilotLayer"]
    assert layer["Type"] == "AWS::Serverless::LayerVersion"
    assert layer["Properties"]["ContentUri"] == "shared/"
    assert layer["Metadata"]["BuildMethod"] == "python3.12"


def test_secret_parameters_only_reach_their_secrets(template: dict[str, Any]) -> None:
    for parameter, secret in (
        ("DatabaseUrl", "DatabaseUrlSecret"),
        ("OpenAIApiKey", "ModelApiKeySecret"),
    ):
        assert template["Parameters"][parameter]["NoEcho"] is True
        users = {
            name
            for name, resource in template["Resources"].items()
            if _references(resource, parameter)
        }
        assert users == {secret}
        assert not _references(template["Globals"], parameter)
    assert template["Resources"]["ModelApiKeySecret"]["Condition"] == "HasModelApiKey"


def test_api_routes_split_between_front_door_and_execute(template: dict[str, Any]) -> None:
    def routes(logical_id: str) -> set[tuple[str, str]]:
        events = _events(template, logical_id, "HttpApi")
        assert all(event["ApiId"] == {"Ref": "FlowPilotHttpApi"} for event in events)
        return {(event["Method"], event["Path"]) for event in events}

    assert routes("ChatCompletionFunction") == {("ANY", "/"), ("ANY", "/{proxy+}")}
    assert routes("AgentExecuteFunction") == {("ANY", "/execute"), ("ANY", "/mcp")}
    assert not _events(template, "HeartbeatFunction", "HttpApi")
    assert not _events(template, "SignalPlannerFunction", "HttpApi")


def test_signal_queue_redrives_after_five_receives(template: dict[str, Any]) -> None:
    planner = function_spec("SignalPlannerFunction", template, base_dir=ROOT)
    queue = _props(template, "SignalQueue")
    assert queue["VisibilityTimeout"] >= 6 * planner.timeout_s
    assert queue["RedrivePolicy"]["maxReceiveCount"] == 5
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {
        "Fn::GetAtt": ["SignalDeadLetterQueue", "Arn"]
    }
    assert _props(template, "SignalDeadLetterQueue")["MessageRetentionPeriod"] == 14 * 24 * 3600
    assert "FifoQueue" not in queue


def test_planner_reports_batch_item_failures(template: dict[str, Any]) -> None:
    (sqs,) = _events(template, "SignalPlannerFunction", "SQS")
    assert sqs["Queue"] == {"Fn::GetAtt": ["SignalQueue", "Arn"]}
    assert sqs["BatchSize"] == 10
    assert sqs["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_heartbeat_schedule_is_short_lived(template: dict[str, Any]) -> None:
    (schedule,) = _events(template, "HeartbeatFunction", "ScheduleV2")
    assert schedule["ScheduleExpression"] == "rate(5 minutes)"
    assert schedule["RetryPolicy"]["MaximumRetryAttempts"] <= 1
    assert schedule["RetryPolicy"]["MaximumEventAgeInSeconds"] <= 60


def test_heartbeat_input_matches_the_sample_event(template: dict[str, Any]) -> None:
    (schedule,) = _events(template, "HeartbeatFunction", "ScheduleV2")
    # Fill in what CloudFormation (${...}) and Scheduler (<aws.scheduler.*>) substitute.
    raw = re.sub(r"\$\{[^}]+\}", "x", schedule["Input"]["Fn::Sub"])
    delivered = json.loads(raw)
    sample = load_event("heartbeat_schedule")
    assert set(delivered) == set(sample)
    assert delivered["detail-type"] == sample["detail-type"] == "Scheduled Event"
    assert delivered["source"] == sample["source"] == "aws.scheduler"
    assert delivered["detail"] == sample["detail"] == {}


def test_only_agent_execute_holds_side_effect_permissions(template: dict[str, Any]) -> None:
    for logical_id in FUNCTIONS:
        policies = _policy_text(template, logical_id).lower()
        side_effects = "ses:" in policies or "flowpilot-skill-" in policies
        assert side_effects == (logical_id == "AgentExecuteFunction"), logical_id
        assert "webhooksigningsecret" not in policies or logical_id == "AgentExecuteFunction"


def test_invokes_are_scoped_to_agent_execute(template: dict[str, Any]) -> None:
    """Other functions may invoke agent-execute only (and the heartbeat itself, to fan out)."""
    for logical_id in FUNCTIONS - {"AgentExecuteFunction"}:
        (policy,) = _props(template, logical_id)["Policies"]
        invoke_statements = [
            statement
            for statement in policy["Statement"]
            if "lambda:InvokeFunction" in json.dumps(statement["Action"])
        ]
        assert invoke_statements, logical_id
        for statement in invoke_statements:
            resources = statement["Resource"]
            for resource in resources if isinstance(resources, list) else [resources]:
                text = json.dumps(resource)
                own = logical_id == "HeartbeatFunction" and text.endswith('-heartbeat"}')
                assert "AgentExecuteFunction" in text or own, (logical_id, text)
        assert '"*"' not in json.dumps(policy), logical_id


def test_outputs(template: dict[str, Any]) -> None:
    assert {"ApiUrl", "SignalQueueUrl", "AgentExecuteFunctionName"} <= set(template["Outputs"])


def test_sample_events_match_their_routes(template: dict[str, Any]) -> None:
    health = load_event("chat_completion_health")
    assert health["version"] == "2.0"
    assert health["routeKey"] == health["requestContext"]["routeKey"] == "ANY /{proxy+}"
    execute = load_event("agent_execute_http")
    assert execute["routeKey"] == "ANY /execute"
    assert execute["headers"]["authorization"].startswith("Bearer ")
    assert isinstance(json.loads(execute["body"]), dict)
    batch = load_event("signal_planner_sqs")
    assert len(batch["Records"]) == 2
    for record in batch["Records"]:
        assert record["eventSource"] == "aws:sqs"
        assert set(json.loads(record["body"])) == {"signal_id", "tenant_id"}
    assert load_event("agent_execute_invoke")["skill"] == "memory_search"


def test_malformed_events_are_each_broken() -> None:
    assert "requestContext" not in load_event("malformed/chat_completion_no_request_context")
    assert "skill" not in load_event("malformed/agent_execute_missing_skill")
    (record,) = load_event("malformed/signal_planner_body_not_json")["Records"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(record["body"])
    assert not isinstance(load_event("malformed/heartbeat_not_an_object"), dict)
