import { KeyConflictError, KeyNotFoundError, KeyStoreUnavailableError, type TelemetryOptions } from 'keygate';
import {
  type ApiKeyRecord,
  applyPatch,
  CAPABILITIES,
  type Capabilities,
  type Capable,
  ChangeRelay,
  changeOf,
  createTelemetry,
  type KeyActivity,
  type KeyChange,
  type KeyChangeEvent,
  type KeyPatch,
  mergeUsage,
  observedLookup,
  parseChange,
  quote,
  type Telemetry,
  type UsageBatch,
  type UsageCount,
  type UsageOutcome,
  type UsageStore,
  type WritableKeyStore,
  type WriteOptions,
} from 'keygate/store-kit';
import type { Pool } from 'pg';
import { PostgresAuditLog } from './audit-log.js';
import { sqlState, unavailable } from './errors.js';
import { migrateSchema } from './migrate.js';
import { PostgresOutbox } from './outbox.js';
import { COLUMNS, type KeyRow, recordOf, recordParams } from './rows.js';
import { type PGliteLike, type Query, type SqlClient, sqlClient, validSchema } from './sql-client.js';

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
export class PostgresKeyStore implements WritableKeyStore, UsageStore, Capable {
  /**
   * Its `changes` (every write, announced across processes), `usage`, and `audit`: the append-only
   * table `keygate_audit`, written after each key write (not in its transaction); and `outbox` (see
   * `PostgresOutbox`): the events a `KeyManager` hands with a write, inserted in its transaction.
   */
  declare readonly [CAPABILITIES]: Capabilities;
  readonly schema: string;
  /** The NOTIFY channel: `keygate_changes`, suffixed with the schema when it is not `public`. */
  readonly channel: string;
  private readonly telemetry: Telemetry | undefined;
  private readonly sql: SqlClient;
  private readonly table: string;
  private readonly usageTable: string;
  private readonly activityTable: string;
  private readonly relay = new ChangeRelay();
  private readonly outbox: PostgresOutbox;
  private readonly onError: (err: KeyStoreUnavailableError) => void;
  private unlisten: (() => void) | undefined;
  private closed = false;

  constructor(options: PostgresKeyStoreOptions) {
    this.sql = sqlClient(options?.client);
    this.telemetry = createTelemetry(options.telemetry);
    this.onError = options.onError ?? (() => {});
    const schema = validSchema(options.schema ?? 'public');
    this.schema = schema;
    this.channel = schema === 'public' ? 'keygate_changes' : `keygate_changes_${schema}`;
    // Identifiers are validated above and quoted, never taken from request data; values always go as parameters.
    this.table = `"${schema}".keygate_keys`;
    this.usageTable = `"${schema}".keygate_usage`;
    this.activityTable = `"${schema}".keygate_key_activity`;
    this.outbox = new PostgresOutbox(this.sql, `"${schema}"`);
    this[CAPABILITIES] = {
      changes: this,
      usage: this,
      audit: new PostgresAuditLog(this.sql, `"${schema}"`),
      outbox: this.outbox,
    };
  }

  /**
   * Creates or upgrades the tables. Idempotent: versions already applied (recorded in
   * `keygate_migrations`) are skipped, and an advisory lock serialises concurrent callers.
   *
   * @example
   * await store.migrate(); // at start-up, before the first request; a second call does nothing
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateSchema(this.sql, this.schema);
  }

  findByHash(hash: string): Promise<ApiKeyRecord | null> {
    return observedLookup(this.telemetry, 'postgres', async () => {
      const { rows } = await this.sql.query<KeyRow>(`SELECT ${COLUMNS} FROM ${this.table} WHERE hash = $1`, [hash]);
      return rows[0] ? recordOf(rows[0]) : null;
    });
  }

  async findById(id: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.sql.query<KeyRow>(`SELECT ${COLUMNS} FROM ${this.table} WHERE id = $1`, [id]);
    return rows[0] ? recordOf(rows[0]) : null;
  }

  async listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.sql.query<KeyRow>(
      `SELECT ${COLUMNS} FROM ${this.table} WHERE account_id = $1 ORDER BY created_at, id`,
      [accountId],
    );
    return rows.map(recordOf);
  }

  async insert(record: ApiKeyRecord, options?: WriteOptions): Promise<ApiKeyRecord> {
    const stored = { ...record, version: 1 };
    const change = changeOf('created', stored);
    const row = await this.sql
      .transaction(async (q) => {
        const { rows } = await q<KeyRow>(
          `INSERT INTO ${this.table} (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16::jsonb, $17, $18::jsonb, $19, $20) RETURNING ${COLUMNS}`,
          recordParams(stored),
        );
        if (options?.events?.length) await this.outbox.appendIn(q, options.events);
        await this.notify(q, change);
        return rows[0] as KeyRow;
      })
      .catch((err: unknown) => {
        throw duplicateOf(err, record.id) ?? err;
      });
    const created = recordOf(row);
    this.relay.emit(change);
    return created;
  }

  async update(id: string, patch: KeyPatch, condition?: WriteOptions): Promise<ApiKeyRecord> {
    const { next, change } = await this.sql.transaction(async (q) => {
      const { rows } = await q<KeyRow>(`SELECT ${COLUMNS} FROM ${this.table} WHERE id = $1 FOR UPDATE`, [id]);
      if (!rows[0]) throw new KeyNotFoundError(id);
      // The shared patch semantics: throws KeyRevokedError for a revoked key and KeyConflictError for a
      // version other than `ifVersion`, so the transaction rolls back. The row lock makes the check atomic.
      const next = applyPatch(recordOf(rows[0]), patch, condition);
      await q(
        `UPDATE ${this.table} SET name = $2, status = $3, permissions = $4::jsonb, allowed_ips = $5::jsonb,
          updated_at = $6, expires_at = $7, revoked_at = $8, rotated_to = $9, metadata = $10::jsonb, version = $11,
          rate_limit = $12::jsonb, suspended_at = $13, suspended_reason = $14 WHERE id = $1`,
        [
          next.id,
          next.name,
          next.status,
          JSON.stringify(next.permissions),
          JSON.stringify(next.allowedIps),
          next.updatedAt,
          next.expiresAt,
          next.revokedAt,
          next.rotatedTo,
          JSON.stringify(next.metadata),
          next.version,
          next.rateLimit ? JSON.stringify(next.rateLimit) : null,
          next.suspendedAt ?? null,
          next.suspendedReason ?? null,
        ],
      );
      if (condition?.events?.length) await this.outbox.appendIn(q, condition.events);
      const change = changeOf(next.status === 'revoked' ? 'revoked' : 'updated', next);
      await this.notify(q, change);
      return { next, change };
    });
    this.relay.emit(change);
    return next;
  }

  /**
   * Adds a flush of usage counts in one transaction: each (key, day, outcome) is an upsert that adds
   * to the stored count, so flushes from any number of processes add up exactly.
   */
  async addUsage(batch: UsageBatch): Promise<void> {
    const { counts, activity } = mergeUsage(batch);
    if (counts.length === 0 && activity.length === 0) return;
    await this.sql.transaction(async (q) => {
      if (counts.length > 0) {
        await q(
          `INSERT INTO ${this.usageTable} AS u (key_id, account_id, day, outcome, count)
            SELECT * FROM unnest($1::text[], $2::text[], $3::date[], $4::text[], $5::bigint[])
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
        await q(
          `INSERT INTO ${this.activityTable} AS a (key_id, last_used_at, last_used_ip)
            SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[])
            ON CONFLICT (key_id) DO UPDATE SET last_used_at = EXCLUDED.last_used_at, last_used_ip = EXCLUDED.last_used_ip
            WHERE a.last_used_at < EXCLUDED.last_used_at`,
          [activity.map((a) => a.keyId), activity.map((a) => a.lastUsedAt), activity.map((a) => a.lastUsedIp)],
        );
      }
    });
  }

  async getUsage(keyId: string, from: string, to: string): Promise<UsageCount[]> {
    const { rows } = await this.sql.query<{ account_id: string; day: string; outcome: string; count: string | number }>(
      `SELECT account_id, to_char(day, 'YYYY-MM-DD') AS day, outcome, count FROM ${this.usageTable}
        WHERE key_id = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day, outcome`,
      [keyId, from, to],
    );
    return rows.map((r) => ({
      keyId,
      accountId: r.account_id,
      day: r.day,
      outcome: r.outcome as UsageOutcome,
      count: Number(r.count),
    }));
  }

  async getActivity(keyId: string): Promise<KeyActivity | null> {
    const { rows } = await this.sql.query<{ last_used_at: Date | string; last_used_ip: string | null }>(
      `SELECT last_used_at, last_used_ip FROM ${this.activityTable} WHERE key_id = $1`,
      [keyId],
    );
    const row = rows[0];
    if (!row) return null;
    return { keyId, lastUsedAt: new Date(row.last_used_at).toISOString(), lastUsedIp: row.last_used_ip };
  }

  /**
   * Subscribes to changes made by this process and, through LISTEN/NOTIFY, by every other process
   * on the same database. The first subscription takes one pooled connection for LISTEN; each time
   * LISTEN is in place (first, and again after a drop) listeners get `{ type: 'resync' }`.
   */
  subscribe(listener: (change: KeyChangeEvent) => void): () => void {
    const off = this.relay.subscribe(listener);
    if (!this.unlisten && !this.closed) {
      this.unlisten = this.sql.listen(this.channel, {
        onPayload: (payload) => {
          const change = parseChange(payload);
          if (change) this.relay.emit(change);
        },
        // Notifications sent while LISTEN was not in place are lost: every cache drops what it holds.
        onListening: () => this.relay.emit({ type: 'resync' }),
        onError: (err) => this.onError(unavailable(err)),
      });
    }
    return () => {
      off();
      if (this.relay.listeners === 0) this.stopListening();
    };
  }

  /** Ends the LISTEN connection. The pool or PGlite instance stays open: it is the caller's. */
  close(): void {
    this.closed = true;
    this.stopListening();
  }

  private stopListening(): void {
    this.unlisten?.();
    this.unlisten = undefined;
  }

  // NOTIFY inside the transaction is delivered at COMMIT and dropped on ROLLBACK: no change is announced that did not happen.
  private async notify(q: Query, change: KeyChange): Promise<void> {
    await q('SELECT pg_notify($1, $2)', [this.channel, JSON.stringify(change)]);
  }
}

/** The conflict a failed INSERT stands for (a duplicate id or digest), or undefined for any other failure. */
function duplicateOf(err: unknown, id: string): KeyConflictError | undefined {
  const cause = (err as { cause?: unknown }).cause;
  if (!(err instanceof KeyStoreUnavailableError) || sqlState(cause) !== '23505') return undefined;
  const constraint = String((cause as { constraint?: unknown }).constraint ?? '');
  return constraint.includes('hash')
    ? new KeyConflictError('a key with the same digest already exists', { keyId: id })
    : new KeyConflictError(`a key with id ${quote(id)} already exists`, { keyId: id });
}
