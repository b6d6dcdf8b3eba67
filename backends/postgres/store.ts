import { KeyStoreUnavailableError, type TelemetryOptions } from 'keygate';
import { CAPABILITIES, type Capabilities, type ChangeRelay, parseChange } from 'keygate/store-kit';
import type { Pool } from 'pg';
import { SqlAuditLog } from '../sql/audit-log.js';
import type { SqlEngine } from '../sql/engine.js';
import { type KeyDialect, SqlKeyStore } from '../sql/key-store.js';
import { sqlState, unavailable } from './errors.js';
import { migrateSchema } from './migrate.js';
import { PostgresOutbox } from './outbox.js';
import { type PGliteLike, type SqlClient, sqlClient, validSchema } from './sql-client.js';
import { type PgTx, pgEngine } from './sql-tx.js';

/** Options of {@link PostgresKeyStore}. */
export interface PostgresKeyStoreOptions {
  /** A `pg` Pool (not a single Client) or a PGlite instance; told apart by duck typing. The caller owns it and ends it. */
  client: Pool | PGliteLike;
  /**
   * Schema that holds the tables, created by `migrate()` if missing. Lower-case letters, digits and
   * `_`, at most 40 characters. Default `'public'`.
   */
  schema?: string;
  /**
   * Called when the change channel fails (it reconnects by itself, then tells every cache to resync),
   * with a `KeyStoreUnavailableError` whose `cause` is the client's error. Default: ignore.
   */
  onError?: (err: KeyStoreUnavailableError) => void;
  /**
   * Where to report lookups by digest (`keygate.store.lookups`, `keygate.store.lookup.duration`, a
   * `keygate.store.lookup` span): for a store used without a `CachedKeyStore` (otherwise give telemetry
   * to the cache). @default undefined (none)
   */
  telemetry?: TelemetryOptions;
}

// Every member of {@link PostgresKeyStoreOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ client: true, schema: true, onError: true, telemetry: true } satisfies Record<
  keyof PostgresKeyStoreOptions,
  true
>);

/**
 * A key store in PostgreSQL, through a `pg` Pool or embedded PGlite (PostgreSQL in WASM, persisted
 * in a folder). Lookups by digest use a unique index; every write is one transaction that locks
 * the row, refuses revoked keys and bumps `version`. Changes go out with NOTIFY at commit and come
 * back through LISTEN, so a `CachedKeyStore` in any process drops a revoked key at once; when the
 * LISTEN connection comes back after a drop, subscribers get a resync. A failure of the client
 * (connection refused, a query error) throws `KeyStoreUnavailableError` with the client's error as `cause`.
 *
 * @example
 * const store = new PostgresKeyStore({ client: new pg.Pool({ connectionString }) }); // or new PGlite('./.keygate')
 * await store.migrate();
 * const keys = new KeyManager({ store });
 * const cached = new CachedKeyStore(store, { ttlMs: 30_000 });
 * // The dashboard reads the same tables through its own store: new PostgresDashboardStore({ client: pool }).
 */
export class PostgresKeyStore extends SqlKeyStore<PgTx> {
  /**
   * Its `changes` (every write, announced across processes), `usage`, `audit` and `auditedWrites`: the
   * append-only table `keygate_audit`, where the entry a `KeyManager` hands with a key write is
   * inserted in the write's transaction; and `outbox` (see `PostgresOutbox`): the events a
   * `KeyManager` hands with a write, inserted in its transaction too.
   */
  declare readonly [CAPABILITIES]: Capabilities;
  readonly schema: string;
  /** The NOTIFY channel: `keygate_changes`, suffixed with the schema when it is not `public`. */
  readonly channel: string;
  private readonly sql: SqlClient;

  constructor(options: PostgresKeyStoreOptions) {
    const sql = sqlClient(options?.client);
    const schema = validSchema(options.schema ?? 'public');
    const channel = schema === 'public' ? 'keygate_changes' : `keygate_changes_${schema}`;
    // Identifiers are validated above and quoted, never taken from request data; values always go as parameters.
    const engine = pgEngine(sql, schema);
    const outbox = new PostgresOutbox(engine);
    super({ ...postgresKeyDialect(engine, channel, outbox), migrate: () => migrateSchema(sql, schema) }, options, {
      where: 'PostgresKeyStore',
      names: OPTION_NAMES,
    });
    this.sql = sql;
    this.schema = schema;
    this.channel = channel;
    // The audit table's trigger also refuses TRUNCATE.
    const audit = new SqlAuditLog(engine);
    this[CAPABILITIES] = { changes: this, usage: this, audit, auditedWrites: audit, outbox };
  }

  // The first subscription takes one pooled connection for LISTEN; each time LISTEN is in place (first,
  // and again after a drop) listeners get a resync: notifications sent while it was not are lost.
  protected listen(relay: ChangeRelay): () => void {
    return this.sql.listen(this.channel, {
      onPayload: (payload) => {
        const change = parseChange(payload);
        if (change) relay.emit(change);
      },
      onListening: () => relay.emit({ type: 'resync' }),
      onError: (err) => this.reportError(unavailable(err)),
    });
  }
}

/** PostgreSQL under the key store: `RETURNING`, row locks, NOTIFY at commit, usage upserted from arrays. */
function postgresKeyDialect(
  engine: SqlEngine<PgTx>,
  channel: string,
  outbox: PostgresOutbox,
): Omit<KeyDialect<PgTx>, 'migrate'> {
  const usageTable = engine.table('usage');
  const activityTable = engine.table('key_activity');
  return {
    ...engine,
    engine: 'postgres',
    lockRow: ' FOR UPDATE',
    returning: true,
    usageSql: {
      counts: `SELECT account_id, to_char(day, 'YYYY-MM-DD') AS day, outcome, count FROM ${usageTable}
        WHERE key_id = ? AND day BETWEEN ?::date AND ?::date ORDER BY day, outcome`,
      activity: `SELECT last_used_at, last_used_ip FROM ${activityTable} WHERE key_id = ?`,
    },
    duplicate: (err) => {
      const cause = (err as { cause?: unknown }).cause;
      if (!(err instanceof KeyStoreUnavailableError) || sqlState(cause) !== '23505') return undefined;
      return String((cause as { constraint?: unknown }).constraint ?? '').includes('hash') ? 'hash' : 'id';
    },
    appendEvents: (tx, events) => outbox.appendIn(tx, events),
    // NOTIFY inside the transaction is delivered at COMMIT and dropped on ROLLBACK.
    *announce(tx, change) {
      yield tx.run('SELECT pg_notify(?, ?)', [channel, JSON.stringify(change)]);
    },
    *addUsage(tx, { counts, activity }) {
      if (counts.length > 0) {
        yield tx.run(
          `INSERT INTO ${usageTable} AS u (key_id, account_id, day, outcome, count)
            SELECT * FROM unnest(?::text[], ?::text[], ?::date[], ?::text[], ?::bigint[])
            ON CONFLICT (key_id, day, outcome) DO UPDATE SET count = u.count + EXCLUDED.count`,
          [
            counts.map((c) => c.keyId),
            counts.map((c) => c.accountId),
            counts.map((c) => c.day),
            counts.map((c) => c.outcome),
            counts.map((c) => c.count),
          ],
        );
      }
      if (activity.length > 0) {
        yield tx.run(
          `INSERT INTO ${activityTable} AS a (key_id, last_used_at, last_used_ip)
            SELECT * FROM unnest(?::text[], ?::timestamptz[], ?::text[])
            ON CONFLICT (key_id) DO UPDATE SET last_used_at = EXCLUDED.last_used_at, last_used_ip = EXCLUDED.last_used_ip
            WHERE a.last_used_at < EXCLUDED.last_used_at`,
          [activity.map((a) => a.keyId), activity.map((a) => a.lastUsedAt), activity.map((a) => a.lastUsedIp)],
        );
      }
    },
  };
}
