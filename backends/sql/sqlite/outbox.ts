// The outbox's statements (tables `keygate_outbox`, `keygate_webhook_endpoints` and
// `keygate_webhook_deliveries` in ./migrations.ts). Times are ISO 8601 text, compared as text.

/** The outbox's statements that only SQLite writes this way (the rest are in the SQL core's outbox). */
export const OUTBOX_SQL = {
  /** ? id, account, type, at, data (JSON). An id already stored is skipped (no row changed). */
  appendEvent: `INSERT INTO keygate_outbox (id, account_id, type, at, data) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (id) DO NOTHING`,
  /**
   * One pending delivery per enabled endpoint of the account that takes the event's type (or '*'):
   * ? event id, event id, event type, at, at, account, event type.
   */
  fanOut: `INSERT INTO keygate_webhook_deliveries
        (id, event_id, endpoint_id, account_id, event_type, status, attempts, next_attempt_at, created_at)
      SELECT ? || ':' || e.id, ?, e.id, e.account_id, ?, 'pending', 0, ?, ? FROM keygate_webhook_endpoints e
      WHERE e.account_id = ? AND e.enabled = 1
        AND EXISTS (SELECT 1 FROM json_each(e.event_types) t WHERE t.value = ? OR t.value = '*')`,
  /** ? now, now. Ends the due deliveries whose endpoint is gone or disabled, so they never block the queue. */
  failOrphans: `UPDATE keygate_webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_token = NULL,
        last_error = CASE WHEN NOT EXISTS (SELECT 1 FROM keygate_webhook_endpoints e WHERE e.id = endpoint_id)
          THEN 'endpoint_removed' ELSE 'endpoint_disabled' END
      WHERE status = 'pending' AND next_attempt_at <= ? AND (leased_until IS NULL OR leased_until <= ?)
        AND NOT EXISTS (SELECT 1 FROM keygate_webhook_endpoints e WHERE e.id = endpoint_id AND e.enabled = 1)`,
} as const;
