"""The skill registry: packs synced into ``agent_skills``, listed, and catalogued."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from flowpilot.db import Database, as_json
from flowpilot.skills.spec import SkillPack, builtin_pack


@dataclass
class SyncReport:
    inserted: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        return {"inserted": self.inserted, "updated": self.updated, "unchanged": self.unchanged}


def sync_packs(db: Database, tenant_id: uuid.UUID, packs: Sequence[SkillPack]) -> SyncReport:
    """Upsert every skill of the packs; unchanged skills are not rewritten."""
    report = SyncReport()
    with db.transaction(tenant_id) as tx:
        for pack in packs:
            rows = [skill.row() for skill in pack.skills]
            if not rows:
                continue
            changed = {
                r["name"]: r["inserted"]
                for r in tx.all("skill_sync", pack=pack.pack, skills=as_json(rows))
            }
            for row in rows:
                name = row["name"]
                if name not in changed:
                    report.unchanged.append(name)
                elif changed[name]:
                    report.inserted.append(name)
                else:
                    report.updated.append(name)
    return report


def sync_builtin(db: Database, tenant_id: uuid.UUID) -> SyncReport:
    return sync_packs(db, tenant_id, [builtin_pack()])


def list_skills(db: Database, tenant_id: uuid.UUID) -> list[dict[str, Any]]:
    return db.all(tenant_id, "skill_list")
