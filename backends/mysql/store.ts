import { InvalidInputError, KeyStoreUnavailableError, type TelemetryOptions } from 'keygate';
import { CAPABILITIES, type Capabilities, type ChangeRelay, quote } from 'keygate/store-kit';
import type { Pool } from 'mysql2/promise';
import { SqlAuditLog } from '../sql/audit-log.js';
import { pollChanges } from '../sql/change-poller.js';
import type { SqlEngine } from '../sql/engine.js';
import { type KeyDialect, SqlKeyStore } from '../sql/key-store.js';
import type { RunInfo } from '../sql/step.js';
import { mysqlChangeFeed, pruneChanges } from './change-poller.js';
import { ER_DUP_ENTRY, errnoOf, unavailable } from './errors.js';
import { migrateKeyStore } from './migrate.js';
import { MysqlOutbox } from './outbox.js';
import { type SqlClient, sqlClient, validTablePrefix } from './sql-client.js';
import { MYSQL_TIME, type MysqlTx, mysqlEngine } from './sql-tx.js';

/**
 * Options of {@link MysqlKeyStore}.
 *
 * @example
 * const options: MysqlKeyStoreOptions = { client: pool, tablePrefix: 'keygate_', pollIntervalMs: 250 };
 */
export interface MysqlKeyStoreOptions {
  /** A `mysql2/promise` Pool (not a single connection). The tables live in its database. The caller owns it and ends it. */
  client: Pool;
  /**
   * Start of every table's name (`<prefix>keys`, `<prefix>usage`, ...): a lower-case letter, then
   * letters, digits and `_`, at most 40 characters. @default 'keygate_'
   */
  tablePrefix?: string;
  /**
   * Milliseconds between two reads of the change table by a process that has subscribers (a
   * `CachedKeyStore`): a change made in another process reaches this one within `pollIntervalMs` plus
   * one query. 10 to 60,000. @default 500
   */
  pollIntervalMs?: number;
  /**
   * Milliseconds a change row is kept before a poller deletes it (checked once a minute); a process
   * whose polls fail for longer resyncs its caches when it is back. At least 60,000. @default 600_000
   */
  changeRetentionMs?: number;
  /**
   * Called when a poll of the change table fails (the poller retries by itself), with a
   * `KeyStoreUnavailableError` whose `cause` is the client's error. Default: ignore.
   */
  onError?: (err: KeyStoreUnavailableError) => void;
  /**
   * Where to report lookups by digest (`keygate.store.lookups`, `keygate.store.lookup.duration`, a
   * `keygate.store.lookup` span): for a store used without a `CachedKeyStore`. @default undefined (none)
   */
  telemetry?: TelemetryOptions;
}

// Every member of {@link MysqlKeyStoreOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({
  client: true,
  tablePrefix: true,
  pollIntervalMs: true,
  changeRetentionMs: true,
  onError: true,
  telemetry: true,
} satisfies Record<keyof MysqlKeyStoreOptions, true>);

const DEFAULT_POLL_MS = 500;
const DEFAULT_RETAIN_MS = 600_000;

/**
 * A key store in MySQL 8 or MariaDB 10.6+, through a `mysql2/promise` Pool. Lookups by digest use a
 * unique index; every write is one transaction that locks the row (`SELECT ... FOR UPDATE`), refuses
 * revoked keys and bumps `version`. MySQL has no LISTEN, so each write also adds a row to a change
 * table in its transaction, and every process with subscribers polls that table every
 * `pollIntervalMs`: a revocation made in one process reaches a `CachedKeyStore` in another within
 * `pollIntervalMs` + one query (default 500 ms), and the same process at once. A failure of the client
 * (connection refused or lost, a query error) throws `KeyStoreUnavailableError` with the client's
 * error as `cause`, which `authenticate` answers with 503.
 *
 * @example
 * const pool = mysql.createPool({ uri: 'mysql://app@127.0.0.1:3306/app' }); // from 'mysql2/promise'
 * const store = new MysqlKeyStore({ client: pool });
 * await store.migrate();
 * const keys = new KeyManager({ store });
 * const cached = new CachedKeyStore(store, { ttlMs: 30_000 });
 */
export class MysqlKeyStore extends SqlKeyStore<MysqlTx> {
  /**
   * Its `changes` (every write, announced across processes through the change table), `usage`,
   * `audit` and `auditedWrites` (the append-only table `<prefix>audit`, where the entry a `KeyManager`
   * hands with a key write is inserted in the write's transaction) and `outbox` (the events a
   * `KeyManager` hands with a write, inserted in its transaction too).
   */
  declare readonly [CAPABILITIES]: Capabilities;
  readonly tablePrefix: string;
  /** Milliseconds between two polls of the change table. */
  readonly pollIntervalMs: number;
  private readonly retainMs: number;
  private readonly sql: SqlClient;

  constructor(options: MysqlKeyStoreOptions) {
    const sql = sqlClient(options?.client);
    const prefix = validTablePrefix(options.tablePrefix ?? 'keygate_');
    // The prefix is validated above, never taken from request data; values always go as parameters.
    const engine = mysqlEngine(sql, prefix);
    const outbox = new MysqlOutbox(engine);
    super({ ...mysqlKeyDialect(engine, prefix, outbox), migrate: () => migrateKeyStore(sql, prefix) }, options, {
      where: 'MysqlKeyStore',
      names: OPTION_NAMES,
    });
    this.sql = sql;
    this.tablePrefix = prefix;
    this.pollIntervalMs = bounded('pollIntervalMs', options.pollIntervalMs, DEFAULT_POLL_MS, 10, 60_000);
    this.retainMs = bounded('changeRetentionMs', options.changeRetentionMs, DEFAULT_RETAIN_MS, 60_000, 2 ** 31);
    // TRUNCATE fires no trigger in MySQL or MariaDB: grant the application's user no DROP.
    const audit = new SqlAuditLog(engine);
    this[CAPABILITIES] = { changes: this, usage: this, audit, auditedWrites: audit, outbox };
  }

  /**
   * Deletes change rows older than `changeRetentionMs` now (pollers also do it once a minute). Returns how many went.
   *
   * @example
   * await store.pruneChanges(); // 0 when pollers keep up
   */
  pruneChanges(): Promise<number> {
    return pruneChanges(this.sql.query, this.tablePrefix, this.retainMs);
  }

  // Polling starts from the newest change: each time it does (first, and after rows it had not read
  // were pruned) listeners get a resync.
  protected listen(relay: ChangeRelay): () => void {
    const feed = mysqlChangeFeed(this.sql, this.tablePrefix, this.retainMs);
    return pollChanges(
      feed,
      { intervalMs: this.pollIntervalMs, maxBackoffMs: 5_000, resyncAfterFailure: false, pruneEveryMs: 60_000 },
      {
        onChange: (change) => relay.emit(change),
        onResync: () => relay.emit({ type: 'resync' }),
        onError: (err) => this.reportError(unavailable(err instanceof KeyStoreUnavailableError ? err.cause : err)),
      },
    );
  }
}

/** MySQL under the key store: read-back after INSERT, row locks, a change table, usage upserted row by row in key order. */
function mysqlKeyDialect(
  engine: SqlEngine<MysqlTx>,
  p: string,
  outbox: MysqlOutbox,
): Omit<KeyDialect<MysqlTx>, 'migrate'> {
  return {
    ...engine,
    engine: 'mysql',
    lockRow: ' FOR UPDATE',
    returning: false,
    usageSql: {
      counts: `SELECT account_id, DATE_FORMAT(day, '%Y-%m-%d') AS day, outcome, count FROM ${p}usage
        WHERE key_id = ? AND day BETWEEN ? AND ? ORDER BY day, outcome`,
      activity: `SELECT last_used_at, last_used_ip FROM ${p}key_activity WHERE key_id = ?`,
    },
    duplicate: (err) => {
      const cause = (err as { cause?: unknown }).cause;
      if (!(err instanceof KeyStoreUnavailableError) || errnoOf(cause) !== ER_DUP_ENTRY) return undefined;
      return /keys_hash/.test(String((cause as { message?: unknown }).message ?? '')) ? 'hash' : 'id';
    },
    appendEvents: (tx, events) => outbox.appendIn(tx, events),
    // The counter's row lock is held to COMMIT, so change numbers commit in order; a rollback takes the
    // number back with the write, so no change is announced that did not happen.
    *announce(tx, change) {
      const { insertId: seq } = (yield tx.run(
        `UPDATE ${p}change_counter SET seq = LAST_INSERT_ID(seq + 1) WHERE id = 1`,
      )) as RunInfo;
      yield tx.run(`INSERT INTO ${p}changes (seq, at, payload) VALUES (?, UTC_TIMESTAMP(3), ?)`, [
        seq,
        JSON.stringify(change),
      ]);
    },
    // Rows go in key order, so concurrent flushes lock them in the same order.
    *addUsage(tx, { counts, activity }) {
      const sortedCounts = [...counts].sort((a, b) => order(a.keyId + a.day + a.outcome, b.keyId + b.day + b.outcome));
      for (const c of sortedCounts) {
        yield tx.run(
          `INSERT INTO ${p}usage (key_id, account_id, day, outcome, count) VALUES (?, ?, ?, ?, ?)
            ON DUPLICATE KEY UPDATE count = count + ?`,
          [c.keyId, c.accountId, c.day, c.outcome, c.count, c.count],
        );
      }
      for (const a of [...activity].sort((x, y) => order(x.keyId, y.keyId))) {
        const at = MYSQL_TIME.write(a.lastUsedAt);
        // The address is assigned first, while last_used_at still holds the stored time.
        yield tx.run(
          `INSERT INTO ${p}key_activity (key_id, last_used_at, last_used_ip) VALUES (?, ?, ?)
            ON DUPLICATE KEY UPDATE last_used_ip = IF(last_used_at < ?, ?, last_used_ip),
              last_used_at = IF(last_used_at < ?, ?, last_used_at)`,
          [a.keyId, at, a.lastUsedIp, at, a.lastUsedIp, at, at],
        );
      }
    },
  };
}

const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function bounded(field: string, value: unknown, fallback: number, min: number, max: number): number {
  const v = value ?? fallback;
  if (typeof v !== 'number' || !(v >= min && v <= max)) {
    throw new InvalidInputError(
      field,
      `${field} must be a number of milliseconds from ${min} to ${max}, got ${quote(v)}`,
      {
        reason: 'out_of_range',
      },
    );
  }
  return v;
}
