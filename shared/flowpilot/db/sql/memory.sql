-- Memory: notes, facts, lessons and preferences, searchable with PostgreSQL full text.

-- name: memory_upsert
-- With a key, a memory replaces the one of the same (category, key); without, it is new.
-- A write without an importance keeps the stored one; the latest write sets the expiry.
INSERT INTO agent_memory AS m (tenant_id, category, key, content, importance, expires_at,
                               metadata)
VALUES (%(tenant_id)s, %(category)s, %(key)s, %(content)s,
        COALESCE(%(importance)s::real, 0.5),
        now() + make_interval(days => %(expires_in_days)s::integer),
        %(metadata)s)
ON CONFLICT (tenant_id, category, key) WHERE key IS NOT NULL DO UPDATE
SET content = EXCLUDED.content,
    importance = COALESCE(%(importance)s::real, m.importance),
    expires_at = EXCLUDED.expires_at,
    metadata = m.metadata || EXCLUDED.metadata,
    updated_at = now()
RETURNING memory_id, (xmax = 0) AS created;

-- name: memory_search
-- Any query word may match (websearch syntax still counts: a row matching every word, or a
-- quoted phrase, ranks higher); the text rank is weighed by recency (half weight after 30
-- days) and importance. Expired memories are never returned.
WITH q AS (
    SELECT websearch_to_tsquery('english', %(query)s) AS strict,
           NULLIF(replace(plainto_tsquery('english', %(query)s)::text, ' & ', ' | '), '')
               ::tsquery AS loose
), hits AS (
    SELECT m.memory_id, m.category, m.key, m.content, m.importance, m.created_at,
           m.updated_at,
           ts_rank(m.search, q.loose, 1) + ts_rank(m.search, q.strict, 1) AS text_rank
    FROM agent_memory m, q
    WHERE m.tenant_id = %(tenant_id)s
      AND (m.search @@ q.strict OR m.search @@ q.loose)
      AND (m.expires_at IS NULL OR m.expires_at > now())
      AND (%(category)s::text IS NULL OR m.category = %(category)s::text)
)
SELECT memory_id::text AS memory_id, category, key, content,
       round((text_rank
              * (1.0 / (1.0 + extract(epoch FROM now() - updated_at) / 86400.0 / 30.0))
              * (0.5 + importance))::numeric, 6)::float8 AS score,
       to_jsonb(created_at) #>> '{}' AS created_at
FROM hits
ORDER BY score DESC, updated_at DESC
LIMIT %(limit)s;
