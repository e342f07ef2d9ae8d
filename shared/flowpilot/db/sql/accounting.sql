-- Token accounting: what a tenant has spent today against its daily budget.

-- name: accounting_tokens_today
-- "Today" starts at midnight in the database's time zone, as the heartbeat's guard counts it.
SELECT t.daily_token_budget AS budget, flowpilot_tokens_today(t.tenant_id) AS used
FROM tenants t
WHERE t.tenant_id = %(tenant_id)s;
