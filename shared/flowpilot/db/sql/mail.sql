-- Mail: what send_email sent (through SES) or, locally, delivered only to the mailbox.

-- name: mail_insert
INSERT INTO mailbox (tenant_id, recipient, subject, body, provider_message_id)
VALUES (%(tenant_id)s, %(recipient)s, %(subject)s, %(body)s, %(provider_message_id)s)
RETURNING mail_id::text AS mail_id, to_jsonb(created_at) #>> '{}' AS created_at;

-- name: mail_list
SELECT mail_id::text AS mail_id, recipient, subject, body, provider_message_id,
       to_jsonb(created_at) #>> '{}' AS created_at
FROM mailbox
WHERE tenant_id = %(tenant_id)s
ORDER BY created_at DESC, mail_id
LIMIT %(limit)s;

