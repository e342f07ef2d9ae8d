-- Threads and their messages.

-- name: thread_start
-- A new thread and its first (user) message, in one statement.
WITH t AS (
    INSERT INTO threads (tenant_id, title, created_by)
    VALUES (%(tenant_id)s, %(title)s, %(created_by)s)
    RETURNING thread_id
), m AS (
    INSERT INTO thread_messages (tenant_id, thread_id, role, content)
    SELECT %(tenant_id)s, t.thread_id, 'user', %(content)s FROM t
    RETURNING message_id
)
SELECT t.thread_id FROM t, m;

-- name: thread_user_message_add
-- A user message on one of the tenant's own threads; no row back means no such thread.
WITH t AS (
    UPDATE threads SET updated_at = now()
    WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s
    RETURNING thread_id
)
INSERT INTO thread_messages (tenant_id, thread_id, role, content)
SELECT %(tenant_id)s, t.thread_id, 'user', %(content)s FROM t
RETURNING message_id, created_at;

-- name: thread_view
-- The thread and its latest %(limit)s messages, oldest first (a thread with none: one row).
SELECT t.thread_id, t.title, m.role, m.content, m.projection, m.created_at
FROM threads t
LEFT JOIN LATERAL (
    SELECT role, content, projection, created_at, message_id
    FROM thread_messages
    WHERE tenant_id = t.tenant_id AND thread_id = t.thread_id
    ORDER BY created_at DESC, (role = 'assistant') DESC, message_id DESC
    LIMIT %(limit)s
) m ON true
WHERE t.tenant_id = %(tenant_id)s AND t.thread_id = %(thread_id)s
ORDER BY m.created_at, (m.role = 'assistant'), m.message_id;

-- name: thread_list
-- The tenant's threads, most recently active first, each with its latest message.
SELECT t.thread_id, t.title, t.updated_at, last.content AS last_message
FROM threads t
LEFT JOIN LATERAL (
    SELECT left(content, 200) AS content
    FROM thread_messages
    WHERE tenant_id = t.tenant_id AND thread_id = t.thread_id
    ORDER BY created_at DESC, (role = 'assistant') DESC
    LIMIT 1
) last ON true
WHERE t.tenant_id = %(tenant_id)s
ORDER BY t.updated_at DESC, t.thread_id
LIMIT %(limit)s;
