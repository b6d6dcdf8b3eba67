import type { SqlEngine } from '../sql/engine.js';
import { ROW_LOCKS, SqlOutbox } from '../sql/outbox.js';
import type { PgTx } from './sql-tx.js';

/**
 * The outbox of a `PostgresKeyStore` (its `outbox` capability), in the tables `keygate_outbox`,
 * `keygate_webhook_endpoints` and `keygate_webhook_deliveries` of the store's schema (migration 7).
 * An event a `KeyManager` hands with a key write is inserted in that write's transaction, with one
 * delivery row per matching enabled endpoint (an INSERT ... SELECT): a crash loses both or neither.
 * A claim selects due rows `FOR UPDATE SKIP LOCKED` and sets a lease (`lease_token`, `leased_until`)
 * in one statement, so concurrent dispatchers, in any process, never claim the same delivery while a
 * lease holds; an outcome is recorded only under the token of the lease that sent it.
 */
export class PostgresOutbox extends SqlOutbox<PgTx> {
  constructor(engine: SqlEngine<PgTx>) {
    const hooks = engine.table('webhook_endpoints');
    const deliveries = engine.table('webhook_deliveries');
    super({
      ...engine,
      ...ROW_LOCKS,
      *insertEvent(tx, params) {
        const sql = `INSERT INTO ${engine.table('outbox')} (id, account_id, type, at, data) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (id) DO NOTHING`;
        return ((yield tx.run(sql, params)) as { changes: number }).changes === 1;
      },
      fanOut: `INSERT INTO ${deliveries} (id, event_id, endpoint_id, account_id, event_type, status, attempts, next_attempt_at, created_at)
        SELECT ?::text || ':' || e.id, ?, e.id, e.account_id, ?, 'pending', 0, ?::timestamptz, ?::timestamptz FROM ${hooks} e
        WHERE e.account_id = ? AND e.enabled AND (e.event_types @> to_jsonb(?::text) OR e.event_types @> '"*"'::jsonb)`,
      failOrphans: `UPDATE ${deliveries} d SET status = 'failed', next_attempt_at = NULL, lease_token = NULL,
          last_error = CASE WHEN e.id IS NULL THEN 'endpoint_removed' ELSE 'endpoint_disabled' END
        FROM ${deliveries} d2 LEFT JOIN ${hooks} e ON e.id = d2.endpoint_id
        WHERE d.id = d2.id AND d.status = 'pending' AND d.next_attempt_at <= ?
          AND (d.leased_until IS NULL OR d.leased_until <= ?) AND (e.id IS NULL OR NOT e.enabled)`,
    });
  }
}
