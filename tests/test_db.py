"""The database layer: schema idempotency, tenant binding, wrapped errors."""

from __future__ import annotations

import uuid

import pytest

from flowpilot.db import Database
from flowpilot.db.schema import apply_schema
from flowpilot.errors import DatabaseError, InvalidRequest
from flowpilot.tenancy import authenticate_api_key, create_tenant
from flowpilot.testing.databases import TestPostgres

CATALOG = """
SELECT 'column' AS kind, table_name || '.' || column_name || ':' || data_type
       || ':' || is_nullable || ':' || coalesce(column_default, '') AS item
FROM information_schema.columns WHERE table_schema = 'public'
UNION ALL
SELECT 'index', indexname || ':' || indexdef FROM pg_indexes WHERE schemaname = 'public'
UNION ALL
SELECT 'policy', tablename || '.' || policyname || ':' || coalesce(qual, '')
FROM pg_policies WHERE schemaname = 'public'
UNION ALL
SELECT 'constraint', conrelid::regclass || '.' || conname || ':' || pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = 'public'::regnamespace
UNION ALL
SELECT 'rls', relname || ':' || relrowsecurity FROM pg_class
WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'
ORDER BY 1, 2
"""

TABLES = {
    "tenants", "modules", "agent_memory", "agent_objectives", "agent_skills", "agent_runs",
    "agent_steps", "agent_artifacts", "agent_reflections", "agent_events", "agent_approvals",
    "threads", "thread_messages", "signals", "projects", "project_members", "outbox",
    "workflows", "workflow_instances", "workflow_history", "automations", "model_routes",
    "leases", "idempotency_records", "api_keys", "peers", "audit_log",
}  # fmt: skip


def _catalog(db: Database) -> list[tuple[str, str]]:
    with db.connection() as conn:
        return [(row["kind"], row["item"]) for row in conn.execute(CATALOG).fetchall()]


def test_schema_applies_twice_to_an_empty_database_with_the_same_result(
    postgres: TestPostgres,
) -> None:
    name = postgres.create_empty()
    db = Database(postgres.url_for(name))
    try:
        apply_schema(db)
        first = _catalog(db)
        apply_schema(db)
        assert _catalog(db) == first
        tables = {item.split(":")[0] for kind, item in first if kind == "rls"}
        assert tables >= TABLES
        # Every table has row level security switched on and a tenant policy.
        assert all(item.endswith(":true") for kind, item in first if kind == "rls")
        policies = {item.split(".")[0] for kind, item in first if kind == "policy"}
        assert policies == tables
    finally:
        db.close()
        postgres.drop(name)


def test_a_tenant_transaction_cannot_read_or_write_another_tenants_rows(db: Database) -> None:
    acme = create_tenant(db, "Acme")
    globex = create_tenant(db, "Globex")
    with db.transaction(acme.tenant_id) as tx:
        assert tx.one("tenant_get")["name"] == "Acme"
        assert [m["module"] for m in tx.all("module_list")] == []
    # The named query binds the transaction's tenant; RLS hides the rest even to raw SQL.
    with db.transaction(globex.tenant_id) as tx:
        names = [r["name"] for r in tx.sql("SELECT name FROM tenants")]
        assert names == ["Globex"]
        keys = tx.sql("SELECT tenant_id FROM api_keys")
        assert {r["tenant_id"] for r in keys} == {globex.tenant_id}
    with pytest.raises(DatabaseError) as raised, db.transaction(globex.tenant_id) as tx:
        tx.sql("INSERT INTO modules (tenant_id, module) VALUES (%s, 'spy')", (acme.tenant_id,))
    assert raised.value.code == "forbidden_row"


def test_callers_cannot_pass_their_own_tenant_id(db: Database) -> None:
    acme = create_tenant(db, "Acme")
    with pytest.raises(InvalidRequest), db.transaction(acme.tenant_id) as tx:
        tx.one("tenant_get", tenant_id=uuid.uuid4())


def test_a_failed_transaction_leaves_nothing_behind(db: Database) -> None:
    acme = create_tenant(db, "Acme")
    with pytest.raises(RuntimeError), db.transaction(acme.tenant_id) as tx:
        tx.run("module_set", module="crm", enabled=True)
        raise RuntimeError("boom")
    with db.transaction(acme.tenant_id) as tx:
        assert tx.all("module_list") == []


def test_statement_timeout_is_a_clear_error(db: Database) -> None:
    with pytest.raises(DatabaseError) as raised:
        with db.transaction(statement_timeout_ms=50) as tx:
            tx.sql("SELECT pg_sleep(1)")
    assert raised.value.code == "statement_timeout"


def test_read_only_transactions_refuse_writes(db: Database) -> None:
    acme = create_tenant(db, "Acme")
    with pytest.raises(DatabaseError) as raised:
        with db.transaction(acme.tenant_id, read_only=True) as tx:
            tx.run("module_set", module="crm", enabled=True)
    assert raised.value.code == "read_only"


def test_api_keys_are_stored_hashed_and_authenticate_their_tenant(db: Database) -> None:
    acme = create_tenant(db, "Acme")
    with db.connection() as conn:
        stored = conn.execute("SELECT key_hash, prefix FROM api_keys").fetchone()
    assert acme.api_key not in stored["key_hash"]
    assert authenticate_api_key(db, acme.api_key).tenant_id == acme.tenant_id


def test_an_unreachable_database_is_a_database_error() -> None:
    db = Database("postgresql://nobody@127.0.0.1:1/none", connect_timeout=1)
    with pytest.raises(DatabaseError), db.transaction() as tx:
        tx.one("database_ping")
    db.close()
