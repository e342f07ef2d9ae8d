-- The soul: identity, voice and values (category soul) and constraints (category
-- constraints) in agent_memory, which every run's bootstrap reads first (run_context).

-- name: soul_read
SELECT category, key, content, metadata, updated_at
FROM agent_memory
WHERE tenant_id = %(tenant_id)s AND category IN ('soul', 'constraints')
  AND (expires_at IS NULL OR expires_at > now())
ORDER BY category, key;

-- name: soul_replace
-- The soul owns its two categories: rows given are upserted, every other row in them goes.
-- The delete and the upsert touch disjoint keys, so their order inside the statement is moot.
WITH new AS (
    SELECT r ->> 'category' AS category, r ->> 'key' AS key, r ->> 'content' AS content,
           COALESCE(r -> 'metadata', '{}'::jsonb) AS metadata
    FROM jsonb_array_elements(%(rows)s) AS r
), gone AS (
    DELETE FROM agent_memory m
    WHERE m.tenant_id = %(tenant_id)s AND m.category IN ('soul', 'constraints')
      AND NOT EXISTS (SELECT 1 FROM new WHERE new.category = m.category AND new.key = m.key)
    RETURNING 1
), saved AS (
    INSERT INTO agent_memory AS m (tenant_id, category, key, content, importance, metadata)
    SELECT %(tenant_id)s, category, key, content, 1.0, metadata FROM new
    ON CONFLICT (tenant_id, category, key) WHERE key IS NOT NULL DO UPDATE
    SET content = EXCLUDED.content, importance = EXCLUDED.importance,
        metadata = EXCLUDED.metadata, expires_at = NULL, updated_at = now()
    RETURNING 1
), e AS (
    INSERT INTO agent_events (tenant_id, kind, summary, payload)
    VALUES (%(tenant_id)s, 'soul_updated', 'The agent''s soul was updated',
            jsonb_build_object('by', %(by)s::text))
)
SELECT (SELECT count(*) FROM saved) AS saved, (SELECT count(*) FROM gone) AS removed;
