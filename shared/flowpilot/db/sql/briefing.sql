-- The briefing (flowpilot_briefing in schema.sql): what a business owner, or the agent waking
-- up, needs to know, in one trip.

-- name: briefing_snapshot
SELECT flowpilot_briefing(%(tenant_id)s) AS briefing;
