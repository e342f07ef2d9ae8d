-- FlowPilot schema: the single source of truth for the database.
-- Applies idempotently to an empty database (every statement is IF NOT EXISTS or guarded),
-- so `flowpilot db migrate` can run on every deploy. Every table carries tenant_id and has
-- Row Level Security: the application runs tenant work as role flowpilot_tenant with
-- app.tenant_id set per transaction; Supabase clients are scoped by their JWT's tenant_id.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'flowpilot_tenant') THEN
        CREATE ROLE flowpilot_tenant NOLOGIN;
    END IF;
END
$$;

-- The connecting role must be able to SET ROLE flowpilot_tenant for tenant-bound work.
DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'flowpilot_tenant', 'MEMBER') THEN
        EXECUTE format('GRANT flowpilot_tenant TO %I', current_user);
    END IF;
END
$$;

-- The tenant FlowPilot bound its transaction to (app.tenant_id; NULL when unbound).
CREATE OR REPLACE FUNCTION flowpilot_app_tenant() RETURNS uuid
LANGUAGE sql STABLE AS $$
    SELECT NULLIF(current_setting('app.tenant_id', true), '')::uuid
$$;

-- The tenant of a Supabase client: the tenant_id claim of the JWT PostgREST sets.
CREATE OR REPLACE FUNCTION flowpilot_client_tenant() RETURNS uuid
LANGUAGE sql STABLE AS $$
    SELECT (NULLIF(current_setting('request.jwt.claims', true), '')::jsonb ->> 'tenant_id')::uuid
$$;

-- ---------------------------------------------------------------------------------------
-- Tenants, modules, credentials
-- ---------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS tenants (
    tenant_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    autonomy text NOT NULL DEFAULT 'balanced'
        CHECK (autonomy IN ('cautious', 'balanced', 'autonomous')),
    daily_token_budget integer NOT NULL DEFAULT 200000 CHECK (daily_token_budget >= 0),
    settings jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS modules (
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    module text NOT NULL,
    enabled boolean NOT NULL DEFAULT true,
    config jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, module)
);

CREATE TABLE IF NOT EXISTS api_keys (
    key_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    name text NOT NULL DEFAULT 'default',
    prefix text NOT NULL,
    key_hash text NOT NULL UNIQUE,
    scopes text[] NOT NULL DEFAULT ARRAY['*'],
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at timestamptz
);
CREATE INDEX IF NOT EXISTS api_keys_tenant_idx ON api_keys (tenant_id);

CREATE TABLE IF NOT EXISTS peers (
    peer_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    name text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('mcp', 'a2a', 'openai')),
    endpoint text NOT NULL,
    credentials_ref text,
    enabled boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name)
);

-- ---------------------------------------------------------------------------------------
-- Memory (soul, notes, facts, lessons) and episodic events
-- ---------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS agent_memory (
    memory_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    category text NOT NULL CHECK (category IN
        ('soul', 'identity', 'constraints', 'working', 'fact', 'lesson', 'preference')),
    key text,
    content text NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
    importance real NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    search tsvector GENERATED ALWAYS AS
        (to_tsvector('english', coalesce(key, '') || ' ' || content)) STORED,
    expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS agent_memory_key_idx
    ON agent_memory (tenant_id, category, key) WHERE key IS NOT NULL;
CREATE INDEX IF NOT EXISTS agent_memory_search_idx ON agent_memory USING gin (search);
CREATE INDEX IF NOT EXISTS agent_memory_recent_idx
    ON agent_memory (tenant_id, category, created_at DESC);

CREATE TABLE IF NOT EXISTS agent_events (
    event_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    kind text NOT NULL,
    summary text NOT NULL,
    payload jsonb NOT NULL DEFAULT '{}'::jsonb,
    run_id uuid,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS agent_events_recent_idx ON agent_events (tenant_id, created_at DESC);

-- ---------------------------------------------------------------------------------------
-- Objectives and skills
-- ---------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS agent_objectives (
    objective_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    goal text NOT NULL CHECK (length(goal) BETWEEN 1 AND 2000),
    priority integer NOT NULL DEFAULT 50 CHECK (priority BETWEEN 0 AND 100),
    status text NOT NULL DEFAULT 'open'
        CHECK (status IN ('open', 'paused', 'completed', 'failed', 'cancelled')),
    success_criteria jsonb NOT NULL DEFAULT '[]'::jsonb,
    kpis jsonb NOT NULL DEFAULT '[]'::jsonb,
    progress jsonb NOT NULL DEFAULT '{"plan": [], "cursor": 0}'::jsonb,
    workflow_instance_id uuid,
    locked_by_run uuid,
    locked_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz
);
CREATE INDEX IF NOT EXISTS agent_objectives_open_idx
    ON agent_objectives (tenant_id, priority DESC, created_at) WHERE status = 'open';

CREATE TABLE IF NOT EXISTS agent_skills (
    skill_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{1,63}$'),
    description text NOT NULL,
    instructions text NOT NULL DEFAULT '',
    parameters jsonb NOT NULL DEFAULT '{"type": "object", "properties": {}}'::jsonb,
    handler text NOT NULL,
    category text NOT NULL DEFAULT 'general',
    side_effects text NOT NULL DEFAULT 'read' CHECK (side_effects IN ('read', 'write')),
    trust_level text NOT NULL DEFAULT 'auto'
        CHECK (trust_level IN ('auto', 'notify', 'approve', 'blocked')),
    mcp_exposed boolean NOT NULL DEFAULT false,
    groups text[] NOT NULL DEFAULT '{}',
    module text NOT NULL DEFAULT 'core',
    enabled boolean NOT NULL DEFAULT true,
    pack text NOT NULL DEFAULT 'builtin',
    config jsonb NOT NULL DEFAULT '{}'::jsonb,
    version_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name)
);

-- Tenant policy rows that adjust a skill's trust level (per skill or category, per actor).
CREATE TABLE IF NOT EXISTS trust_policies (
    policy_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    skill text,
    category text,
    actor_type text CHECK (actor_type IN ('user', 'flowpilot', 'peer', 'automation')),
    trust_level text NOT NULL CHECK (trust_level IN ('auto', 'notify', 'approve', 'blocked')),
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (skill IS NOT NULL OR category IS NOT NULL)
);
CREATE INDEX IF NOT EXISTS trust_policies_tenant_idx ON trust_policies (tenant_id);

-- ---------------------------------------------------------------------------------------
-- Runs, steps, artifacts, reflections
-- ---------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS agent_runs (
    run_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    trigger text NOT NULL
        CHECK (trigger IN ('chat', 'heartbeat', 'signal', 'peer', 'automation', 'workflow')),
    status text NOT NULL DEFAULT 'running' CHECK (status IN
        ('running', 'waiting_approval', 'completed', 'failed', 'stopped', 'cancelled')),
    thread_id uuid,
    objective_id uuid,
    goal_frame jsonb NOT NULL DEFAULT '{}'::jsonb,
    state jsonb NOT NULL DEFAULT '{}'::jsonb,
    provider text,
    model text,
    prompt_tokens integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    cost_usd numeric(12, 6) NOT NULL DEFAULT 0,
    stop_reason text,
    error jsonb,
    started_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE INDEX IF NOT EXISTS agent_runs_tenant_idx ON agent_runs (tenant_id, started_at DESC);
CREATE INDEX IF NOT EXISTS agent_runs_waiting_idx
    ON agent_runs (tenant_id) WHERE status = 'waiting_approval';

CREATE TABLE IF NOT EXISTS agent_steps (
    step_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    run_id uuid NOT NULL REFERENCES agent_runs ON DELETE CASCADE,
    seq integer NOT NULL,
    kind text NOT NULL
        CHECK (kind IN ('perceive', 'plan', 'act', 'observe', 'critic', 'answer', 'reflect')),
    skill text,
    input jsonb NOT NULL DEFAULT '{}'::jsonb,
    output jsonb NOT NULL DEFAULT '{}'::jsonb,
    tokens integer NOT NULL DEFAULT 0,
    duration_ms integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (run_id, seq)
);

CREATE TABLE IF NOT EXISTS agent_artifacts (
    artifact_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    run_id uuid REFERENCES agent_runs ON DELETE SET NULL,
    kind text NOT NULL,
    title text NOT NULL,
    content jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS agent_artifacts_run_idx ON agent_artifacts (tenant_id, run_id);

CREATE TABLE IF NOT EXISTS agent_reflections (
    reflection_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    run_id uuid REFERENCES agent_runs ON DELETE SET NULL,
    objective_id uuid REFERENCES agent_objectives ON DELETE SET NULL,
    skill text,
    outcome text NOT NULL CHECK (outcome IN ('success', 'partial', 'no_effect', 'negative')),
    critique text NOT NULL,
    lesson text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS agent_reflections_skill_idx
    ON agent_reflections (tenant_id, skill, created_at DESC);

-- ---------------------------------------------------------------------------------------
-- Approvals, notifications, audit
-- ---------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS agent_approvals (
    approval_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    skill text NOT NULL,
    arguments jsonb NOT NULL,
    arguments_hash text NOT NULL,
    requested_by jsonb NOT NULL,
    run_id uuid REFERENCES agent_runs ON DELETE SET NULL,
    reason text,
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN
            ('pending', 'approved', 'rejected', 'expired', 'executing', 'executed', 'failed')),
    decided_by text,
    decided_at timestamptz,
    result jsonb,
    expires_at timestamptz NOT NULL DEFAULT now() + interval '48 hours',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS agent_approvals_pending_idx
    ON agent_approvals (tenant_id, created_at DESC) WHERE status IN ('pending', 'approved');

CREATE TABLE IF NOT EXISTS notifications (
    notification_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    kind text NOT NULL DEFAULT 'skill_executed',
    title text NOT NULL,
    body jsonb NOT NULL DEFAULT '{}'::jsonb,
    read_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS notifications_unread_idx
    ON notifications (tenant_id, created_at DESC) WHERE read_at IS NULL;

CREATE TABLE IF NOT EXISTS audit_log (
    audit_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    actor_type text NOT NULL,
    actor_id text NOT NULL,
    action text NOT NULL,
    skill text,
    arguments_hash text,
    effective_trust text,
    outcome text NOT NULL,
    duration_ms integer NOT NULL DEFAULT 0,
    error jsonb,
    run_id uuid,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS audit_log_tenant_idx ON audit_log (tenant_id, created_at DESC);

-- Powertools Idempotency records (a PostgreSQL persistence layer), keyed per tenant.
CREATE TABLE IF NOT EXISTS idempotency_records (
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    idempotency_key text NOT NULL,
    status text NOT NULL,
    expiry_timestamp bigint NOT NULL,
    in_progress_expiry_timestamp bigint,
    response_data text,
    payload_hash text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, idempotency_key)
);

-- Local stand-in for SES: what send_email delivered when no AWS is configured.
CREATE TABLE IF NOT EXISTS mailbox (
    mail_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    recipient text NOT NULL,
    subject text NOT NULL,
    body text NOT NULL,
    provider_message_id text,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- ---------------------------------------------------------------------------------------
-- Threads (chat)
-- ---------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS threads (
    thread_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    title text NOT NULL DEFAULT '',
    created_by text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS threads_recent_idx ON threads (tenant_id, updated_at DESC);

CREATE TABLE IF NOT EXISTS thread_messages (
    message_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    thread_id uuid NOT NULL REFERENCES threads ON DELETE CASCADE,
    role text NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content text NOT NULL,
    projection jsonb NOT NULL DEFAULT '{}'::jsonb,
    run_id uuid REFERENCES agent_runs ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS thread_messages_thread_idx
    ON thread_messages (tenant_id, thread_id, created_at);

-- ---------------------------------------------------------------------------------------
-- Signals, projects, outbox
-- ---------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS projects (
    project_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    name text NOT NULL,
    description text NOT NULL DEFAULT '',
    status text NOT NULL DEFAULT 'active',
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS project_members (
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    project_id uuid NOT NULL REFERENCES projects ON DELETE CASCADE,
    member_id text NOT NULL,
    display_name text NOT NULL,
    role text NOT NULL DEFAULT 'member',
    skill_tags text[] NOT NULL DEFAULT '{}',
    workload integer NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, member_id)
);
CREATE INDEX IF NOT EXISTS project_members_tenant_idx ON project_members (tenant_id);

CREATE TABLE IF NOT EXISTS signals (
    signal_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    project_id uuid REFERENCES projects ON DELETE SET NULL,
    source text NOT NULL DEFAULT 'api',
    kind text NOT NULL DEFAULT 'generic',
    title text NOT NULL,
    body text NOT NULL DEFAULT '',
    payload jsonb NOT NULL DEFAULT '{}'::jsonb,
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    strategic_analysis jsonb NOT NULL DEFAULT '{}'::jsonb,
    attempts integer NOT NULL DEFAULT 0,
    claimed_at timestamptz,
    completed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS signals_status_idx ON signals (tenant_id, status, created_at);

CREATE TABLE IF NOT EXISTS outbox (
    outbox_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    topic text NOT NULL,
    payload jsonb NOT NULL,
    published_at timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS outbox_unpublished_idx
    ON outbox (created_at) WHERE published_at IS NULL;

-- ---------------------------------------------------------------------------------------
-- Workflows (FlowForge)
-- ---------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS workflows (
    workflow_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    name text NOT NULL,
    definition jsonb NOT NULL,
    source_yaml text NOT NULL,
    version integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS workflow_instances (
    instance_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    workflow_id uuid NOT NULL REFERENCES workflows ON DELETE CASCADE,
    objective_id uuid REFERENCES agent_objectives ON DELETE SET NULL,
    current_node text NOT NULL,
    status text NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'waiting', 'completed', 'failed', 'cancelled')),
    visits jsonb NOT NULL DEFAULT '{}'::jsonb,
    context jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS workflow_instances_tenant_idx
    ON workflow_instances (tenant_id, status);

CREATE TABLE IF NOT EXISTS workflow_history (
    history_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    instance_id uuid NOT NULL REFERENCES workflow_instances ON DELETE CASCADE,
    node text NOT NULL,
    branch text,
    result_summary text NOT NULL DEFAULT '',
    run_id uuid,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS workflow_history_instance_idx
    ON workflow_history (tenant_id, instance_id, created_at);

-- ---------------------------------------------------------------------------------------
-- Automations, model routes, leases, heartbeat ticks
-- ---------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS automations (
    automation_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    name text NOT NULL,
    trigger_kind text NOT NULL CHECK (trigger_kind IN ('cron', 'event', 'signal')),
    trigger_spec text NOT NULL,
    skill text NOT NULL,
    arguments jsonb NOT NULL DEFAULT '{}'::jsonb,
    executor text NOT NULL DEFAULT 'platform' CHECK (executor IN ('flowpilot', 'platform')),
    enabled boolean NOT NULL DEFAULT true,
    next_run_at timestamptz,
    last_run_at timestamptz,
    last_outcome text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name)
);
CREATE INDEX IF NOT EXISTS automations_due_idx
    ON automations (next_run_at) WHERE enabled;

CREATE TABLE IF NOT EXISTS model_routes (
    route_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    function_name text NOT NULL CHECK (function_name IN
        ('chat', 'heartbeat', 'signal_planner', 'critic', 'reflect', 'workflow_branch')),
    provider text NOT NULL,
    model text NOT NULL,
    tier text NOT NULL DEFAULT 'standard',
    base_url text,
    changed_by text,
    active boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS model_routes_active_idx
    ON model_routes (tenant_id, function_name) WHERE active;

-- A lease is claimed by one conditional UPDATE (no advisory locks: they break behind the
-- transaction pooler). holder is a random token; expires_at bounds a crashed holder.
CREATE TABLE IF NOT EXISTS leases (
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    name text NOT NULL,
    holder text,
    expires_at timestamptz NOT NULL DEFAULT '-infinity',
    acquired_at timestamptz,
    PRIMARY KEY (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS heartbeat_ticks (
    tick_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    outcome text NOT NULL,
    objective_id uuid,
    skill text,
    model_calls integer NOT NULL DEFAULT 0,
    tokens integer NOT NULL DEFAULT 0,
    duration_ms integer NOT NULL DEFAULT 0,
    reason text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS heartbeat_ticks_tenant_idx
    ON heartbeat_ticks (tenant_id, created_at DESC);

-- Model tokens a tenant spent each day (its daily budget is checked against today's row).
-- A run's final statement adds what the run spent since its last one; the offline
-- heuristic reasoner costs nothing. Reading it is one key lookup, however busy the day.
CREATE TABLE IF NOT EXISTS tenant_usage (
    tenant_id uuid NOT NULL REFERENCES tenants ON DELETE CASCADE,
    day date NOT NULL,
    tokens bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, day)
);

-- ---------------------------------------------------------------------------------------
-- Columns added after the first release (ADD COLUMN IF NOT EXISTS upgrades a live database)
-- ---------------------------------------------------------------------------------------
-- When a process last took hold of the run (start, resume, checkpoint): a run 'running'
-- without a sign of life for 15 minutes was interrupted.
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS claimed_at timestamptz NOT NULL DEFAULT now();
-- When follow-through claimed the approval ('executing'); one stuck there was interrupted.
ALTER TABLE agent_approvals ADD COLUMN IF NOT EXISTS claimed_at timestamptz;

-- ---------------------------------------------------------------------------------------
-- Row Level Security, the same rules on every table:
--   tenant_rw    FlowPilot's own tenant-bound transactions (role flowpilot_tenant with
--                app.tenant_id set) read and write their tenant's rows;
--   client_read  Supabase clients (role authenticated) only read their tenant's rows, and not
--                at all the tables that hold credentials, trust or coordination state. Every
--                change goes through FlowPilot, so trust gating and audit cannot be bypassed.
-- ---------------------------------------------------------------------------------------
DO $$
DECLARE
    t text;
    secret_tables text[] := ARRAY['api_keys', 'idempotency_records', 'leases',
                                  'trust_policies', 'peers', 'outbox'];
    has_clients boolean := EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'authenticated')
                           AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'anon');
BEGIN
    FOREACH t IN ARRAY ARRAY[
        'tenants', 'modules', 'api_keys', 'peers', 'agent_memory', 'agent_events',
        'agent_objectives', 'agent_skills', 'trust_policies', 'agent_runs', 'agent_steps',
        'agent_artifacts', 'agent_reflections', 'agent_approvals', 'notifications',
        'audit_log', 'idempotency_records', 'mailbox', 'threads', 'thread_messages',
        'projects', 'project_members', 'signals', 'outbox', 'workflows',
        'workflow_instances', 'workflow_history', 'automations', 'model_routes', 'leases',
        'heartbeat_ticks', 'tenant_usage'
    ]
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO flowpilot_tenant', t);
        -- An earlier schema had one policy for every role and command: replaced below.
        EXECUTE format('DROP POLICY IF EXISTS tenant_isolation ON %I', t);
        IF NOT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = current_schema()
                       AND tablename = t AND policyname = 'tenant_rw') THEN
            EXECUTE format(
                'CREATE POLICY tenant_rw ON %I TO flowpilot_tenant '
                'USING (tenant_id = flowpilot_app_tenant()) '
                'WITH CHECK (tenant_id = flowpilot_app_tenant())', t);
        END IF;
        IF has_clients THEN
            EXECUTE format(
                'REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON %I FROM authenticated, anon', t);
            IF t = ANY(secret_tables) THEN
                EXECUTE format('REVOKE SELECT ON %I FROM authenticated, anon', t);
            ELSIF NOT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = current_schema()
                              AND tablename = t AND policyname = 'client_read') THEN
                EXECUTE format(
                    'CREATE POLICY client_read ON %I FOR SELECT TO authenticated '
                    'USING (tenant_id = flowpilot_client_tenant())', t);
            END IF;
        END IF;
    END LOOP;
END
$$;

-- Replaced by flowpilot_app_tenant() and flowpilot_client_tenant() (after its policies went).
DROP FUNCTION IF EXISTS flowpilot_current_tenant();

-- A database that counted today's tokens by summing runs starts its counter from them.
INSERT INTO tenant_usage (tenant_id, day, tokens)
SELECT r.tenant_id, current_date, sum(r.prompt_tokens + r.completion_tokens)
FROM agent_runs r
WHERE r.started_at >= current_date AND r.provider IS DISTINCT FROM 'heuristic'
GROUP BY r.tenant_id
ON CONFLICT (tenant_id, day) DO NOTHING;

-- ---------------------------------------------------------------------------------------
-- Hot paths as single statements
-- ---------------------------------------------------------------------------------------

-- Model tokens the tenant has spent today ("today" in the database's time zone).
CREATE OR REPLACE FUNCTION flowpilot_tokens_today(p_tenant uuid) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT COALESCE((SELECT u.tokens FROM tenant_usage u
                     WHERE u.tenant_id = p_tenant AND u.day = current_date), 0)
$$;

-- Everything a run perceives, as one document: soul and constraints, open objectives, recent
-- events, working notes and lessons, the thread's recent messages, today's provider tokens
-- against the budget, and a fingerprint of the skill catalog (to reuse a cached skill index).
-- PL/pgSQL rather than SQL so the plan is cached per connection: a SQL function that cannot be
-- inlined is planned on every call (about 0.7 ms of each run's first round trip).
CREATE OR REPLACE FUNCTION flowpilot_run_context(p_tenant uuid, p_thread uuid) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN jsonb_build_object(
        'soul', (
            SELECT jsonb_agg(jsonb_build_object('category', m.category, 'key', m.key,
                                                'content', m.content)
                             ORDER BY m.category, m.key)
            FROM agent_memory m
            WHERE m.tenant_id = p_tenant AND m.category IN ('soul', 'identity', 'constraints')
              AND (m.expires_at IS NULL OR m.expires_at > now())),
        'objectives', (
            SELECT jsonb_agg(o ORDER BY o.priority DESC, o.created_at)
            FROM (SELECT goal, priority, progress, kpis, success_criteria, created_at
                  FROM agent_objectives
                  WHERE tenant_id = p_tenant AND status = 'open'
                  ORDER BY priority DESC, created_at LIMIT 5) o),
        'events', (
            SELECT jsonb_agg(e ORDER BY e.created_at DESC)
            FROM (SELECT kind, summary, created_at FROM agent_events
                  WHERE tenant_id = p_tenant ORDER BY created_at DESC LIMIT 5) e),
        'notes', (
            SELECT jsonb_agg(n ORDER BY n.created_at DESC)
            FROM (SELECT category, content, created_at FROM agent_memory
                  WHERE tenant_id = p_tenant AND category IN ('working', 'lesson')
                    AND (expires_at IS NULL OR expires_at > now())
                  ORDER BY created_at DESC LIMIT 6) n),
        'history', (
            SELECT jsonb_agg(h ORDER BY h.created_at)
            FROM (SELECT role, content, created_at FROM thread_messages
                  WHERE tenant_id = p_tenant AND thread_id = p_thread
                  ORDER BY created_at DESC LIMIT 9) h),
        'tokens_today', flowpilot_tokens_today(p_tenant),
        'daily_budget', (SELECT daily_token_budget FROM tenants WHERE tenant_id = p_tenant),
        'catalog_version', (
            SELECT md5(string_agg(s.name || s.version_hash || s.enabled::text
                                  || (s.module = 'core' OR COALESCE(mo.enabled, false))::text,
                                  ',' ORDER BY s.name))
            FROM agent_skills s
            LEFT JOIN modules mo ON mo.tenant_id = s.tenant_id AND mo.module = s.module
            WHERE s.tenant_id = p_tenant)
    );
END
$$;

-- The briefing: what a business owner (or the agent waking up) needs to know, as one
-- document: pending approvals, open objectives, recent events and failures, waiting signals,
-- today's tokens against the budget, and skills flagged by reflection. PL/pgSQL so its plan
-- is cached per connection (this is the whole of the get_briefing skill's work).
CREATE OR REPLACE FUNCTION flowpilot_briefing(p_tenant uuid) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN jsonb_build_object(
        'approvals', jsonb_build_object(
            'pending', (SELECT count(*) FROM agent_approvals a
                        WHERE a.tenant_id = p_tenant AND a.status = 'pending'
                          AND a.expires_at > now()),
            'top', COALESCE((
                SELECT jsonb_agg(jsonb_build_object(
                           'approval_id', a.approval_id, 'skill', a.skill, 'reason', a.reason,
                           'created_at', a.created_at, 'expires_at', a.expires_at)
                       ORDER BY a.expires_at, a.created_at)
                FROM (SELECT * FROM agent_approvals a
                      WHERE a.tenant_id = p_tenant AND a.status = 'pending'
                        AND a.expires_at > now()
                      ORDER BY a.expires_at, a.created_at
                      LIMIT 5) a), '[]'::jsonb)),
        'objectives', COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                       'objective_id', o.objective_id, 'goal', o.goal, 'priority', o.priority,
                       'steps_done', (SELECT count(*) FROM jsonb_array_elements(
                                          o.progress -> 'plan') s
                                      WHERE s ->> 'status' IN ('done', 'skipped')),
                       'steps_total', jsonb_array_length(COALESCE(o.progress -> 'plan', '[]')),
                       'next_step', o.progress -> 'plan'
                                    -> COALESCE((o.progress ->> 'cursor')::int, 0) ->> 'step',
                       'kpis', o.kpis, 'updated_at', o.updated_at)
                   ORDER BY o.priority DESC, o.created_at)
            FROM (SELECT * FROM agent_objectives o
                  WHERE o.tenant_id = p_tenant AND o.status = 'open'
                  ORDER BY o.priority DESC, o.created_at
                  LIMIT 10) o), '[]'::jsonb),
        'recent_events', COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                       'kind', e.kind, 'summary', e.summary, 'created_at', e.created_at)
                   ORDER BY e.created_at DESC, e.event_id DESC)
            FROM (SELECT * FROM agent_events e
                  WHERE e.tenant_id = p_tenant
                  ORDER BY e.created_at DESC, e.event_id DESC
                  LIMIT 10) e), '[]'::jsonb),
        'failures', jsonb_build_object(
            'count', (SELECT count(*) FROM audit_log l
                      WHERE l.tenant_id = p_tenant AND l.outcome IN ('failed', 'refused')
                        AND l.created_at > now() - interval '24 hours'),
            'recent', COALESCE((
                SELECT jsonb_agg(jsonb_build_object(
                           'skill', l.skill, 'outcome', l.outcome, 'action', l.action,
                           'error', l.error ->> 'message', 'created_at', l.created_at)
                       ORDER BY l.created_at DESC, l.audit_id DESC)
                FROM (SELECT * FROM audit_log l
                      WHERE l.tenant_id = p_tenant AND l.outcome IN ('failed', 'refused')
                        AND l.created_at > now() - interval '24 hours'
                      ORDER BY l.created_at DESC, l.audit_id DESC
                      LIMIT 5) l), '[]'::jsonb)),
        'signals_waiting', (SELECT count(*) FROM signals s
                            WHERE s.tenant_id = p_tenant
                              AND s.status IN ('pending', 'running')),
        'tokens', jsonb_build_object(
            'today', flowpilot_tokens_today(p_tenant),
            'budget', (SELECT t.daily_token_budget FROM tenants t
                       WHERE t.tenant_id = p_tenant)),
        'flagged_skills', COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                       'skill', f.skill, 'bad_outcomes', f.bad, 'last_critique', f.last_critique)
                   ORDER BY f.bad DESC, f.skill)
            FROM (SELECT x.skill, count(*) AS bad,
                         (array_agg(x.critique ORDER BY x.created_at DESC))[1] AS last_critique
                  FROM agent_reflections x
                  WHERE x.tenant_id = p_tenant AND x.skill IS NOT NULL
                    AND x.outcome IN ('negative', 'no_effect')
                    AND x.created_at > now() - interval '7 days'
                  GROUP BY x.skill
                  HAVING count(*) >= 2) f), '[]'::jsonb),
        'generated_at', now()
    );
END
$$;

-- A reflection and what follows from it, in one call: the reflection row (when there is an
-- outcome), its lesson kept in memory (one per skill and objective, replaced), and the
-- objective's new progress, KPIs and status, with the tick's lock released. Used at the end
-- of a tick and after a pre-pass follow-through. Returns the reflection's id (or NULL).
CREATE OR REPLACE FUNCTION flowpilot_record_reflection(
    p_tenant uuid, p_run uuid, p_objective uuid, p_skill text, p_outcome text,
    p_critique text, p_lesson text, p_lesson_key text, p_progress jsonb, p_kpis jsonb,
    p_status text
) RETURNS uuid
LANGUAGE plpgsql AS $$
DECLARE
    reflection uuid;
BEGIN
    IF p_outcome IS NOT NULL THEN
        INSERT INTO agent_reflections
            (tenant_id, run_id, objective_id, skill, outcome, critique, lesson)
        VALUES (p_tenant, p_run, p_objective, p_skill, p_outcome, p_critique, p_lesson)
        RETURNING reflection_id INTO reflection;
    END IF;
    IF p_lesson IS NOT NULL THEN
        INSERT INTO agent_memory (tenant_id, category, key, content, importance, metadata)
        VALUES (p_tenant, 'lesson', p_lesson_key, p_lesson, 0.7,
                jsonb_build_object('skill', p_skill, 'objective_id', p_objective))
        ON CONFLICT (tenant_id, category, key) WHERE key IS NOT NULL
        DO UPDATE SET content = EXCLUDED.content, updated_at = now();
    END IF;
    IF p_objective IS NOT NULL THEN
        UPDATE agent_objectives
        SET progress = COALESCE(p_progress, progress), kpis = COALESCE(p_kpis, kpis),
            status = COALESCE(p_status, status),
            completed_at = CASE WHEN p_status = 'completed' THEN now() ELSE completed_at END,
            locked_by_run = NULL, locked_until = NULL,
            updated_at = CASE WHEN p_progress IS NOT NULL THEN now() ELSE updated_at END
        WHERE tenant_id = p_tenant AND objective_id = p_objective;
    END IF;
    RETURN reflection;
END
$$;

-- How many of a tenant's automations are due: a cron time has come, or an event or signal
-- of the kind they react to arrived since they last ran (their own runs excepted).
CREATE OR REPLACE FUNCTION flowpilot_due_automations(p_tenant uuid) RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT count(*)::integer FROM automations a
    WHERE a.tenant_id = p_tenant AND a.enabled AND (
           (a.trigger_kind = 'cron' AND a.next_run_at <= now())
        OR (a.trigger_kind = 'event' AND EXISTS (
                SELECT 1 FROM agent_events e
                WHERE e.tenant_id = p_tenant AND e.kind = a.trigger_spec
                  AND e.created_at > COALESCE(a.last_run_at, a.created_at)
                  AND (e.payload ->> 'automation_id') IS DISTINCT FROM a.automation_id::text))
        OR (a.trigger_kind = 'signal' AND EXISTS (
                SELECT 1 FROM signals g
                WHERE g.tenant_id = p_tenant AND g.kind = a.trigger_spec
                  AND g.created_at > COALESCE(a.last_run_at, a.created_at))))
$$;

-- The first step of a heartbeat tick, in one round trip: claim the tenant's lease with one
-- conditional upsert; if claimed, read the guards (module, budget, failures) and what is
-- pending. An idle tick then costs one more round trip (heartbeat_finish) and no model call.
CREATE OR REPLACE FUNCTION flowpilot_heartbeat_begin(
    p_tenant uuid, p_holder text, p_ttl_seconds integer
) RETURNS TABLE (
    claimed boolean,
    module_enabled boolean,
    tokens_today bigint,
    daily_token_budget integer,
    recent_failures integer,
    last_failure_at timestamptz,
    open_objectives integer,
    due_automations integer,
    approved_approvals integer,
    stale_approvals integer,
    resumable_runs integer,
    unpublished_outbox integer
)
LANGUAGE plpgsql AS $$
DECLARE
    got text;
BEGIN
    INSERT INTO leases AS l (tenant_id, name, holder, expires_at, acquired_at)
    VALUES (p_tenant, 'heartbeat', p_holder, now() + make_interval(secs => p_ttl_seconds), now())
    ON CONFLICT (tenant_id, name) DO UPDATE
        SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, acquired_at = now()
        WHERE l.expires_at < now()
    RETURNING l.holder INTO got;
    IF got IS DISTINCT FROM p_holder THEN
        RETURN QUERY SELECT false, NULL::boolean, NULL::bigint, NULL::integer, NULL::integer,
            NULL::timestamptz, NULL::integer, NULL::integer, NULL::integer, NULL::integer,
            NULL::integer, NULL::integer;
        RETURN;
    END IF;
    RETURN QUERY SELECT
        true,
        COALESCE((SELECT m.enabled FROM modules m
                  WHERE m.tenant_id = p_tenant AND m.module = 'flowpilot'), false),
        flowpilot_tokens_today(p_tenant),
        (SELECT t.daily_token_budget FROM tenants t WHERE t.tenant_id = p_tenant),
        (SELECT count(*)::integer FROM heartbeat_ticks h
         WHERE h.tenant_id = p_tenant AND h.outcome = 'failed'
           AND h.created_at > now() - interval '48 hours'),
        (SELECT max(h.created_at) FROM heartbeat_ticks h
         WHERE h.tenant_id = p_tenant AND h.outcome = 'failed'),
        (SELECT count(*)::integer FROM agent_objectives o
         WHERE o.tenant_id = p_tenant AND o.status = 'open'),
        flowpilot_due_automations(p_tenant),
        (SELECT count(*)::integer FROM agent_approvals p
         WHERE p.tenant_id = p_tenant AND p.status = 'approved'),
        (SELECT count(*)::integer FROM agent_approvals p
         WHERE p.tenant_id = p_tenant
           AND ((p.status = 'pending' AND p.expires_at <= now())
                OR (p.status = 'executing' AND p.claimed_at < now() - interval '15 minutes'))),
        -- Paused runs whose approval was settled, and runs a crash left 'running'.
        (SELECT count(*)::integer FROM agent_runs r
         WHERE r.tenant_id = p_tenant
           AND ((r.status = 'waiting_approval' AND EXISTS (
                    SELECT 1 FROM agent_approvals a
                    WHERE a.tenant_id = p_tenant AND a.run_id = r.run_id
                      AND a.status IN ('executed', 'failed', 'rejected', 'expired')))
                OR (r.status = 'running' AND r.claimed_at < now() - interval '15 minutes'))),
        (SELECT count(*)::integer FROM outbox x
         WHERE x.tenant_id = p_tenant AND x.published_at IS NULL);
END
$$;
