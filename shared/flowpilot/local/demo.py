"""``flowpilot seed demo``: a tenant that shows the operator working on its own at once.

A small plumbing business with a soul, three objectives with plans and KPIs, the built-in
skills, and a morning-briefing automation. With ``flowpilot up`` running, the heartbeat picks
the first objective within a minute, on the offline reasoner when no model is configured.
"""

from __future__ import annotations

from typing import Any

from flowpilot.db import Database
from flowpilot.objectives import Kpi, ObjectiveIn, create
from flowpilot.soul import Soul, set_soul
from flowpilot.tenancy import NewTenant, create_tenant

SOUL = Soul(
    identity="You are the operator of Harbor Plumbing, a six-person plumbing firm: you keep "
    "leads, customers and the owner's week in order.",
    voice="Plain, warm and brief; lead with what matters; no jargon.",
    values=["Customers hear back within a day", "Never promise a price without the owner"],
    constraints=[
        "Never email a customer without the owner's approval",
        "Quote no prices; hand pricing questions to the owner",
        "Work hours are 7:00 to 18:00, Monday to Saturday",
    ],
)

OBJECTIVES = [
    ObjectiveIn(
        goal="Keep a running note of what needs following up today",
        priority=80,
        success_criteria=["Every open lead and job has a note saying what happens next"],
        kpis=[Kpi(name="notes kept", target=5, current=0, unit="notes", skill="memory_write")],
        plan=[
            "Write a note of the follow-ups that are due today",
            "Write a note of anything waiting for a customer's reply",
            "Write a note of jobs to confirm for tomorrow",
        ],
    ),
    ObjectiveIn(
        goal="Follow up on every new lead within one business day",
        priority=60,
        success_criteria=["No lead waits more than a day for a reply"],
        kpis=[
            Kpi(name="leads followed up", target=10, current=0, unit="leads", skill="send_email")
        ],
        plan=["Check the briefing for new leads", "Email the newest lead to book a visit"],
    ),
    ObjectiveIn(
        goal="Give the owner a short Monday summary of the week ahead",
        priority=40,
        success_criteria=["The owner has the summary before 8:00 on Monday"],
        kpis=[Kpi(name="summaries sent", target=1, current=0, unit="summaries")],
        plan=["Gather the week's jobs and approvals", "Write the summary as a note"],
    ),
]


def seed_demo(db: Database, name: str = "Harbor Plumbing (demo)") -> dict[str, Any]:
    tenant: NewTenant = create_tenant(db, name, modules=("flowpilot",))
    set_soul(db, tenant.tenant_id, SOUL, by="seed")
    objectives = [create(db, tenant.tenant_id, objective) for objective in OBJECTIVES]
    _morning_briefing(db, tenant)
    return {
        "tenant_id": str(tenant.tenant_id),
        "api_key": tenant.api_key,
        "objectives": [o.goal for o in objectives],
    }


def _morning_briefing(db: Database, tenant: NewTenant) -> None:
    """A 7:30 briefing on working days, straight through agent-execute (platform executor)."""
    from flowpilot.automations.models import NewAutomation
    from flowpilot.automations.store import create_automation

    create_automation(
        db,
        tenant.tenant_id,
        NewAutomation(
            name="Morning briefing",
            trigger_kind="cron",
            trigger_spec="30 7 * * 1-6",
            skill="get_briefing",
            arguments={},
            executor="platform",
        ),
    )
