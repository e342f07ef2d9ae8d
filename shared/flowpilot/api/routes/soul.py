"""``/soul``: the agent's identity, voice, values and constraints (read first by every run)."""

from __future__ import annotations

from fastapi import APIRouter

from flowpilot.api.deps import DB, Caller
from flowpilot.soul import Soul, SoulView, get_soul, set_soul

router = APIRouter(tags=["soul"])


@router.get("/soul", response_model=SoulView)
def show_soul(caller: Caller, db: DB) -> SoulView:
    return get_soul(db, caller.tenant_id)


@router.put("/soul", response_model=SoulView)
def replace_soul(body: Soul, caller: Caller, db: DB) -> SoulView:
    """Replace the whole soul; a field left out (or empty) is removed."""
    caller.require("soul")
    return set_soul(db, caller.tenant_id, body, by=caller.subject)
