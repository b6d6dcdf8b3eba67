// The outbox's statements (tables `keygate_outbox`, `keygate_webhook_endpoints` and
// `keygate_webhook_deliveries` in ../migrations.ts). Times are ISO 8601 text, compared as text.

/** The columns of `keygate_webhook_endpoints` that a view needs. */
export const ENDPOINT_COLUMNS = 'id, account_id, url, secret, event_types, enabled, created_at, disabled_at';
/** The columns of `keygate_webhook_deliveries` that a view needs. */
export const DELIVERY_COLUMNS =
  'id, event_id, endpoint_id, account_id, event_type, status, attempts, last_status_code, last_error, last_attempt_at, next_attempt_at, created_at, delivered_at';

/** The outbox's statements. */
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
  /** ? id. */
  event: 'SELECT id, account_id, type, at, data FROM keygate_outbox WHERE id = ?',
  /** ? now, now. Ends the due deliveries whose endpoint is gone or disabled, so they never block the queue. */
  failOrphans: `UPDATE keygate_webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_token = NULL,
        last_error = CASE WHEN NOT EXISTS (SELECT 1 FROM keygate_webhook_endpoints e WHERE e.id = endpoint_id)
          THEN 'endpoint_removed' ELSE 'endpoint_disabled' END
      WHERE status = 'pending' AND next_attempt_at <= ? AND (leased_until IS NULL OR leased_until <= ?)
        AND NOT EXISTS (SELECT 1 FROM keygate_webhook_endpoints e WHERE e.id = endpoint_id AND e.enabled = 1)`,
  /** ? now, now, limit. The due deliveries, oldest first. */
  due: `SELECT id FROM keygate_webhook_deliveries
      WHERE status = 'pending' AND next_attempt_at <= ? AND (leased_until IS NULL OR leased_until <= ?)
      ORDER BY next_attempt_at, id LIMIT ?`,
  /** ? lease token, leased until, delivery id. */
  lease: `UPDATE keygate_webhook_deliveries SET lease_token = ?, leased_until = ? WHERE id = ?
      RETURNING ${DELIVERY_COLUMNS}`,
  /** ? endpoint id. */
  endpoint: `SELECT ${ENDPOINT_COLUMNS} FROM keygate_webhook_endpoints WHERE id = ?`,
  /** ? status code, at, at, delivery id, lease token. No row when the lease is not this one's. */
  complete: `UPDATE keygate_webhook_deliveries SET status = 'delivered', attempts = attempts + 1, last_status_code = ?,
        last_error = NULL, last_attempt_at = ?, next_attempt_at = NULL, delivered_at = ?, lease_token = NULL, leased_until = NULL
      WHERE id = ? AND lease_token = ? AND status = 'pending' RETURNING endpoint_id`,
  /** ? endpoint id. */
  healthy: 'UPDATE keygate_webhook_endpoints SET failing_since = NULL WHERE id = ?',
  /** ? status, status code, error, at, next attempt at, delivery id, lease token. */
  fail: `UPDATE keygate_webhook_deliveries SET status = ?, attempts = attempts + 1, last_status_code = ?, last_error = ?,
        last_attempt_at = ?, next_attempt_at = ?, lease_token = NULL, leased_until = NULL
      WHERE id = ? AND lease_token = ? AND status = 'pending' RETURNING endpoint_id`,
  /** ? endpoint id. The failure streak and state of an endpoint. */
  streak: 'SELECT failing_since, enabled, disabled_at FROM keygate_webhook_endpoints WHERE id = ?',
  /** ? failing since, enabled (0/1), disabled at, endpoint id. */
  setStreak: `UPDATE keygate_webhook_endpoints SET failing_since = ?, enabled = ?, disabled_at = ? WHERE id = ?
      RETURNING ${ENDPOINT_COLUMNS}`,
  /** ? account, limit (all endpoints) or ? account, endpoint id, limit. Newest first. */
  deliveries: (byEndpoint: boolean) =>
    `SELECT ${DELIVERY_COLUMNS} FROM keygate_webhook_deliveries WHERE account_id = ?${
      byEndpoint ? ' AND endpoint_id = ?' : ''
    } ORDER BY id DESC LIMIT ?`,
  /** The endpoint's columns, in `ENDPOINT_COLUMNS` order. */
  createEndpoint: `INSERT INTO keygate_webhook_endpoints (${ENDPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  /** ? account. */
  endpoints: `SELECT ${ENDPOINT_COLUMNS} FROM keygate_webhook_endpoints WHERE account_id = ? ORDER BY created_at, id`,
  /** ? account, id. */
  endpointOf: `SELECT ${ENDPOINT_COLUMNS}, failing_since FROM keygate_webhook_endpoints WHERE account_id = ? AND id = ?`,
  /** ? url, event types (JSON), enabled, disabled at, failing since, account, id. */
  updateEndpoint: `UPDATE keygate_webhook_endpoints SET url = ?, event_types = ?, enabled = ?, disabled_at = ?, failing_since = ?
      WHERE account_id = ? AND id = ? RETURNING ${ENDPOINT_COLUMNS}`,
  /** ? account, id. */
  removeEndpoint: 'DELETE FROM keygate_webhook_endpoints WHERE account_id = ? AND id = ?',
  /** ? endpoint id. */
  orphanDeliveries: `UPDATE keygate_webhook_deliveries SET status = 'failed', last_error = 'endpoint_removed', next_attempt_at = NULL
      WHERE endpoint_id = ? AND status = 'pending'`,
} as const;
