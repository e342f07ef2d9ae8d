"""The database layer: schema idempotency, tenant binding, wrapped errors."""

from __future__ import annotations

import json
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


def test_transaction_settings_are_local_and_durability_is_opt_out(db: Database) -> None:
    acme = create_tenant(db, "Acme")
    probe = (
        "SELECT current_user AS role, current_setting('synchronous_commit') AS sync,"
        " current_setting('app.tenant_id', true) AS tenant"
    )
    with db.transaction(acme.tenant_id) as tx:
        assert tx.sql(probe) == [
            {"role": "flowpilot_tenant", "sync": "on", "tenant": str(acme.tenant_id)}
        ]
    with db.transaction(acme.tenant_id, durable=False) as tx:
        assert tx.sql(probe)[0]["sync"] == "off"
        tx.run("module_set", module="crm", enabled=True)
    # Committed all the same, and nothing stays set on the pooled connection afterwards.
    assert db.all(acme.tenant_id, "module_list")[0]["module"] == "crm"
    with db.connection() as conn:
        after = conn.execute(probe).fetchone()
    assert after is not None and after["sync"] == "on" and not after["tenant"]
    assert after["role"] != "flowpilot_tenant"


def test_a_single_statement_runs_in_its_own_bound_transaction(db: Database) -> None:
    acme = create_tenant(db, "Acme")
    ping = db.one(acme.tenant_id, "database_ping")
    assert ping == {"ok": 1, "role": "flowpilot_tenant", "tenant": str(acme.tenant_id),
                    "sync": "on", "timeout": "15s"}  # fmt: skip
    assert db.one(acme.tenant_id, "database_ping", durable=False)["sync"] == "off"  # type: ignore[index]
    system = db.one(None, "database_ping")
    assert system is not None and system["role"] != "flowpilot_tenant" and not system["tenant"]
    # A failing statement leaves nothing behind, and the next one runs normally.
    with pytest.raises(DatabaseError):
        db.one(acme.tenant_id, "module_set", module=None, enabled=True)
    assert db.all(acme.tenant_id, "module_list") == []
    assert db.one(acme.tenant_id, "module_set", module="crm", enabled=True) is not None
    assert [m["module"] for m in db.all(acme.tenant_id, "module_list")] == ["crm"]


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


def test_supabase_clients_only_read_their_tenant_and_never_write(postgres: TestPostgres) -> None:
    """With Supabase's roles and default grants, a signed-in client reads its own tenant's
    rows, cannot read credentials or trust state, and cannot change anything directly."""
    name = postgres.create_empty()
    db = Database(postgres.url_for(name))
    try:
        with db.connection() as conn:
            for role in ("anon", "authenticated"):
                conn.execute(
                    f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}')"
                    f" THEN CREATE ROLE {role} NOLOGIN; END IF; END $$"
                )
            # Supabase grants every table in public to its client roles by default.
            conn.execute(
                "ALTER DEFAULT PRIVILEGES IN SCHEMA public"
                " GRANT ALL ON TABLES TO anon, authenticated"
            )
        apply_schema(db)
        acme = create_tenant(db, "Acme")
        globex = create_tenant(db, "Globex")
        claims = json.dumps({"tenant_id": str(acme.tenant_id), "role": "authenticated"})

        def as_client(statement: str) -> list[dict[str, object]]:
            with db.connection() as conn, conn.transaction():
                conn.execute("SET LOCAL ROLE authenticated")
                conn.execute("SELECT set_config('request.jwt.claims', %s, true)", (claims,))
                return conn.execute(statement).fetchall()

        names = [r["name"] for r in as_client("SELECT name FROM tenants")]
        assert names == ["Acme"]
        skills = as_client("SELECT DISTINCT tenant_id FROM agent_skills")
        assert skills == [{"tenant_id": acme.tenant_id}] and globex.tenant_id
        for forbidden in (
            "UPDATE agent_skills SET trust_level = 'auto' WHERE name = 'send_email'",
            "SELECT key_hash FROM api_keys",
            "SELECT * FROM trust_policies",
            "INSERT INTO agent_approvals (tenant_id, skill, arguments, arguments_hash,"
            f" requested_by) VALUES ('{acme.tenant_id}', 'x', '{{}}', 'h', '{{}}')",
        ):
            with pytest.raises(DatabaseError) as denied:
                as_client(forbidden)
            assert denied.value.code == "forbidden_row", forbidden
    finally:
        db.close()
        postgres.drop(name)
