import type { SqlEngine } from '../sql/engine.js';
import { ROW_LOCKS, SqlOutbox } from '../sql/outbox.js';
import { ER_DUP_ENTRY, errnoOf } from './errors.js';
import type { MysqlTx } from './sql-tx.js';

/**
 * The outbox of a `MysqlKeyStore` (its `outbox` capability), in the tables `<prefix>outbox`,
 * `<prefix>webhook_endpoints` and `<prefix>webhook_deliveries`. An event a `KeyManager` hands with a
 * key write is inserted in that write's transaction, with one delivery row per matching enabled
 * endpoint (an INSERT ... SELECT): a crash loses both or neither. A claim selects due rows
 * `FOR UPDATE SKIP LOCKED` (MySQL 8, MariaDB 10.6+) and sets a lease (`lease_token`, `leased_until`)
 * in the same transaction, so concurrent dispatchers, in any process, never claim the same delivery
 * while a lease holds; an outcome is recorded only under the token of the lease that sent it.
 */
export class MysqlOutbox extends SqlOutbox<MysqlTx> {
  constructor(engine: SqlEngine<MysqlTx>) {
    const hooks = engine.table('webhook_endpoints');
    const deliveries = engine.table('webhook_deliveries');
    super({
      ...engine,
      ...ROW_LOCKS,
      *insertEvent(tx, params) {
        try {
          yield tx.run(
            `INSERT INTO ${engine.table('outbox')} (id, account_id, type, at, data) VALUES (?, ?, ?, ?, ?)`,
            params,
          );
          return true;
        } catch (err) {
          // An event already stored (published again with its id) keeps the deliveries it has. In MySQL a
          // failed statement does not end the transaction: the key write around it goes on.
          if (errnoOf(err) === ER_DUP_ENTRY) return false;
          throw err;
        }
      },
      fanOut: `INSERT INTO ${deliveries} (id, event_id, endpoint_id, account_id, event_type, status, attempts, next_attempt_at, created_at)
        SELECT CONCAT(?, ':', e.id), ?, e.id, e.account_id, ?, 'pending', 0, ?, ? FROM ${hooks} e
        WHERE e.account_id = ? AND e.enabled AND (JSON_CONTAINS(e.event_types, JSON_QUOTE(?)) OR JSON_CONTAINS(e.event_types, '"*"'))`,
      failOrphans: `UPDATE ${deliveries} d LEFT JOIN ${hooks} e ON e.id = d.endpoint_id
          SET d.status = 'failed', d.next_attempt_at = NULL, d.lease_token = NULL,
            d.last_error = IF(e.id IS NULL, 'endpoint_removed', 'endpoint_disabled')
        WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.leased_until IS NULL OR d.leased_until <= ?)
          AND (e.id IS NULL OR NOT e.enabled)`,
    });
  }
}
