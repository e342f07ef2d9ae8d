"""Tenants and their API keys.

An API key is shown once, at creation, and stored only as its SHA-256 hash: the key is 256
random bits, so a fast hash is enough (no password stretching needed) and lookups stay O(1).
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass

from flowpilot.db import Database
from flowpilot.errors import InvalidRequest, Unauthorized

KEY_PREFIX = "fp_"


@dataclass(frozen=True)
class NewTenant:
    tenant_id: uuid.UUID
    name: str
    api_key: str


@dataclass(frozen=True)
class KeyOwner:
    tenant_id: uuid.UUID
    key_id: uuid.UUID
    scopes: tuple[str, ...]


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def create_tenant(
    db: Database,
    name: str,
    *,
    scopes: tuple[str, ...] = ("*",),
    modules: tuple[str, ...] = (),
    with_builtin_skills: bool = True,
) -> NewTenant:
    """Create a tenant and its first API key (one transaction bound to the new tenant), then
    register the built-in skills for it."""
    name = name.strip()
    if not 1 <= len(name) <= 200:
        raise InvalidRequest("a tenant name needs 1 to 200 characters", code="invalid_name")
    tenant_id = uuid.uuid4()
    api_key = KEY_PREFIX + secrets.token_urlsafe(32)
    with db.transaction(tenant_id) as tx:
        tx.run("tenant_insert", name=name)
        tx.run(
            "api_key_insert",
            name="default",
            prefix=api_key[:8],
            key_hash=hash_api_key(api_key),
            scopes=list(scopes),
        )
        for module in modules:
            tx.run("module_set", module=module, enabled=True)
    if with_builtin_skills:
        from flowpilot.skills.registry import sync_builtin

        sync_builtin(db, tenant_id)
    return NewTenant(tenant_id=tenant_id, name=name, api_key=api_key)


def authenticate_api_key(db: Database, api_key: str) -> KeyOwner:
    """The tenant an API key belongs to; Unauthorized for an unknown or revoked key."""
    if not api_key.startswith(KEY_PREFIX) or len(api_key) > 200:
        raise Unauthorized("invalid API key", code="invalid_api_key")
    with db.transaction() as tx:
        row = tx.one("api_key_lookup", key_hash=hash_api_key(api_key))
    if row is None:
        raise Unauthorized("invalid API key", code="invalid_api_key")
    return KeyOwner(tenant_id=row["tenant_id"], key_id=row["key_id"], scopes=tuple(row["scopes"]))
