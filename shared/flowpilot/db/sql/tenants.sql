-- Tenants, modules and API keys.

-- name: tenant_insert
INSERT INTO tenants (tenant_id, name)
VALUES (%(tenant_id)s, %(name)s)
RETURNING tenant_id, name, autonomy, daily_token_budget, created_at;

-- name: tenant_get
SELECT tenant_id, name, autonomy, daily_token_budget, settings, created_at
FROM tenants
WHERE tenant_id = %(tenant_id)s;

-- name: api_key_insert
INSERT INTO api_keys (tenant_id, name, prefix, key_hash, scopes)
VALUES (%(tenant_id)s, %(name)s, %(prefix)s, %(key_hash)s, %(scopes)s)
RETURNING key_id, prefix, scopes, created_at;

-- name: api_key_lookup
-- System scope: the tenant is what we are trying to learn. Only the hash is compared.
UPDATE api_keys
SET last_used_at = now()
WHERE key_hash = %(key_hash)s AND revoked_at IS NULL
RETURNING key_id, tenant_id, scopes;

-- name: module_set
INSERT INTO modules (tenant_id, module, enabled)
VALUES (%(tenant_id)s, %(module)s, %(enabled)s)
ON CONFLICT (tenant_id, module) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = now()
RETURNING module, enabled;

-- name: module_list
SELECT module, enabled, config, updated_at
FROM modules
WHERE tenant_id = %(tenant_id)s
ORDER BY module;

-- name: database_ping
-- The database answers; and what this transaction runs as (tests check the settings).
SELECT 1 AS ok, current_user AS role, current_setting('app.tenant_id', true) AS tenant,
       current_setting('synchronous_commit') AS sync,
       current_setting('statement_timeout') AS timeout;

-- name: tenant_ids_sample
-- System scope: whether there is exactly one tenant (the CLI's default).
SELECT tenant_id, name FROM tenants ORDER BY created_at LIMIT 2;
