import {
  InvalidInputError,
  KeyConflictError,
  KeyNotFoundError,
  KeyStoreUnavailableError,
  type TelemetryOptions,
} from 'keygate';
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
import type { Pool } from 'mysql2/promise';
import { MysqlAuditLog } from './audit-log.js';
import { ChangePoller, pruneChanges } from './change-poller.js';
import { ER_DUP_ENTRY, errnoOf, unavailable } from './errors.js';
import { migrateKeyStore } from './migrate.js';
import { MysqlOutbox } from './outbox.js';
import { COLUMNS, type KeyRow, PLACEHOLDERS, recordOf, recordParams } from './rows.js';
import { isoTime, type Query, type SqlClient, sqlClient, sqlTime, validTablePrefix } from './sql-client.js';

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
export class MysqlKeyStore implements WritableKeyStore, UsageStore, Capable {
  /**
   * Its `changes` (every write, announced across processes through the change table), `usage`,
   * `audit` (the append-only table `<prefix>audit`, written after each key write, not in its
   * transaction) and `outbox` (the events a `KeyManager` hands with a write, inserted in its transaction).
   */
  declare readonly [CAPABILITIES]: Capabilities;
  readonly tablePrefix: string;
  /** Milliseconds between two polls of the change table. */
  readonly pollIntervalMs: number;
  private readonly retainMs: number;
  private readonly telemetry: Telemetry | undefined;
  private readonly sql: SqlClient;
  private readonly table: string;
  private readonly relay = new ChangeRelay();
  private readonly outbox: MysqlOutbox;
  private readonly onError: (err: KeyStoreUnavailableError) => void;
  private poller: ChangePoller | undefined;
  private closed = false;

  constructor(options: MysqlKeyStoreOptions) {
    this.sql = sqlClient(options?.client);
    this.telemetry = createTelemetry(options.telemetry);
    this.onError = options.onError ?? (() => {});
    const prefix = validTablePrefix(options.tablePrefix ?? 'keygate_');
    this.tablePrefix = prefix;
    this.pollIntervalMs = bounded('pollIntervalMs', options.pollIntervalMs, DEFAULT_POLL_MS, 10, 60_000);
    this.retainMs = bounded('changeRetentionMs', options.changeRetentionMs, DEFAULT_RETAIN_MS, 60_000, 2 ** 31);
    // The prefix is validated above, never taken from request data; values always go as parameters.
    this.table = `${prefix}keys`;
    this.outbox = new MysqlOutbox(this.sql, prefix);
    this[CAPABILITIES] = {
      changes: this,
      usage: this,
      audit: new MysqlAuditLog(this.sql, prefix),
      outbox: this.outbox,
    };
  }

  /**
   * Creates or upgrades the tables. Idempotent: versions already applied (recorded in
   * `<prefix>migrations`) are skipped, and a named lock (`GET_LOCK`) serialises concurrent callers.
   *
   * @example
   * await store.migrate(); // at start-up, before the first request; a second call does nothing
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateKeyStore(this.sql, this.tablePrefix);
  }

  findByHash(hash: string): Promise<ApiKeyRecord | null> {
    return observedLookup(this.telemetry, 'mysql', async () => {
      const { rows } = await this.sql.query<KeyRow>(`SELECT ${COLUMNS} FROM ${this.table} WHERE hash = ?`, [hash]);
      return rows[0] ? recordOf(rows[0]) : null;
    });
  }

  async findById(id: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.sql.query<KeyRow>(`SELECT ${COLUMNS} FROM ${this.table} WHERE id = ?`, [id]);
    return rows[0] ? recordOf(rows[0]) : null;
  }

  async listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.sql.query<KeyRow>(
      `SELECT ${COLUMNS} FROM ${this.table} WHERE account_id = ? ORDER BY created_at, id`,
      [accountId],
    );
    return rows.map(recordOf);
  }

  async insert(record: ApiKeyRecord, options?: WriteOptions): Promise<ApiKeyRecord> {
    const stored = { ...record, version: 1 };
    const change = changeOf('created', stored);
    const row = await this.sql
      .transaction(async (q) => {
        await q(`INSERT INTO ${this.table} (${COLUMNS}) VALUES (${PLACEHOLDERS})`, recordParams(stored));
        if (options?.events?.length) await this.outbox.appendIn(q, options.events);
        await this.announce(q, change);
        const { rows } = await q<KeyRow>(`SELECT ${COLUMNS} FROM ${this.table} WHERE id = ?`, [record.id]);
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
      const { rows } = await q<KeyRow>(`SELECT ${COLUMNS} FROM ${this.table} WHERE id = ? FOR UPDATE`, [id]);
      if (!rows[0]) throw new KeyNotFoundError(id);
      // The shared patch semantics: throws KeyRevokedError for a revoked key and KeyConflictError for a
      // version other than `ifVersion`, so the transaction rolls back. The row lock makes the check atomic.
      const next = applyPatch(recordOf(rows[0]), patch, condition);
      await q(
        `UPDATE ${this.table} SET name = ?, status = ?, permissions = ?, allowed_ips = ?, updated_at = ?, expires_at = ?,
          revoked_at = ?, rotated_to = ?, metadata = ?, version = ?, rate_limit = ?, suspended_at = ?, suspended_reason = ?
          WHERE id = ?`,
        [
          next.name,
          next.status,
          JSON.stringify(next.permissions),
          JSON.stringify(next.allowedIps),
          sqlTime(next.updatedAt),
          sqlTime(next.expiresAt),
          sqlTime(next.revokedAt),
          next.rotatedTo,
          JSON.stringify(next.metadata),
          next.version,
          next.rateLimit ? JSON.stringify(next.rateLimit) : null,
          sqlTime(next.suspendedAt),
          next.suspendedReason ?? null,
          next.id,
        ],
      );
      if (condition?.events?.length) await this.outbox.appendIn(q, condition.events);
      const change = changeOf(next.status === 'revoked' ? 'revoked' : 'updated', next);
      await this.announce(q, change);
      return { next, change };
    });
    this.relay.emit(change);
    return next;
  }

  /**
   * Adds a flush of usage counts in one transaction: each (key, day, outcome) is an upsert that adds
   * to the stored count, so flushes from any number of processes add up exactly. Rows go in key order,
   * so concurrent flushes lock them in the same order.
   */
  async addUsage(batch: UsageBatch): Promise<void> {
    const { counts, activity } = mergeUsage(batch);
    if (counts.length === 0 && activity.length === 0) return;
    const sortedCounts = [...counts].sort((a, b) => order(a.keyId + a.day + a.outcome, b.keyId + b.day + b.outcome));
    const sortedActivity = [...activity].sort((a, b) => order(a.keyId, b.keyId));
    await this.sql.transaction(async (q) => {
      for (const c of sortedCounts) {
        await q(
          `INSERT INTO ${this.tablePrefix}usage (key_id, account_id, day, outcome, count) VALUES (?, ?, ?, ?, ?)
            ON DUPLICATE KEY UPDATE count = count + ?`,
          [c.keyId, c.accountId, c.day, c.outcome, c.count, c.count],
        );
      }
      for (const a of sortedActivity) {
        const at = sqlTime(a.lastUsedAt);
        // The address is assigned first, while last_used_at still holds the stored time.
        await q(
          `INSERT INTO ${this.tablePrefix}key_activity (key_id, last_used_at, last_used_ip) VALUES (?, ?, ?)
            ON DUPLICATE KEY UPDATE last_used_ip = IF(last_used_at < ?, ?, last_used_ip),
              last_used_at = IF(last_used_at < ?, ?, last_used_at)`,
          [a.keyId, at, a.lastUsedIp, at, a.lastUsedIp, at, at],
        );
      }
    });
  }

  async getUsage(keyId: string, from: string, to: string): Promise<UsageCount[]> {
    const { rows } = await this.sql.query<{ account_id: string; day: string; outcome: string; count: string | number }>(
      `SELECT account_id, DATE_FORMAT(day, '%Y-%m-%d') AS day, outcome, count FROM ${this.tablePrefix}usage
        WHERE key_id = ? AND day BETWEEN ? AND ? ORDER BY day, outcome`,
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
    const { rows } = await this.sql.query<{ last_used_at: string; last_used_ip: string | null }>(
      `SELECT last_used_at, last_used_ip FROM ${this.tablePrefix}key_activity WHERE key_id = ?`,
      [keyId],
    );
    const row = rows[0];
    if (!row) return null;
    return { keyId, lastUsedAt: isoTime(row.last_used_at), lastUsedIp: row.last_used_ip };
  }

  /**
   * Subscribes to changes made by this process (at once) and, through the change table, by every
   * other process on the same database (within `pollIntervalMs` + one query). The first subscription
   * starts polling; each time polling starts from the newest change (first, and after rows it had not
   * read were pruned) listeners get `{ type: 'resync' }`.
   */
  subscribe(listener: (change: KeyChangeEvent) => void): () => void {
    const off = this.relay.subscribe(listener);
    if (!this.poller && !this.closed) {
      this.poller = new ChangePoller(this.sql, this.tablePrefix, this.pollIntervalMs, this.retainMs, {
        onPayload: (payload) => {
          const change = parseChange(payload);
          if (change) this.relay.emit(change);
        },
        onResync: () => this.relay.emit({ type: 'resync' }),
        onError: (err) => this.onError(unavailable(err instanceof KeyStoreUnavailableError ? err.cause : err)),
      });
      this.poller.start();
    }
    return () => {
      off();
      if (this.relay.listeners === 0) this.stopPolling();
    };
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

  /** Stops polling. The pool stays open: it is the caller's. */
  close(): void {
    this.closed = true;
    this.stopPolling();
  }

  private stopPolling(): void {
    this.poller?.stop();
    this.poller = undefined;
  }

  // The counter's row lock is held to COMMIT, so change numbers commit in order; a rollback takes the
  // number back with the write, so no change is announced that did not happen.
  private async announce(q: Query, change: KeyChange): Promise<void> {
    const { insertId: seq } = await q(
      `UPDATE ${this.tablePrefix}change_counter SET seq = LAST_INSERT_ID(seq + 1) WHERE id = 1`,
    );
    await q(`INSERT INTO ${this.tablePrefix}changes (seq, at, payload) VALUES (?, UTC_TIMESTAMP(3), ?)`, [
      seq,
      JSON.stringify(change),
    ]);
  }
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

/** The conflict a failed INSERT stands for (a duplicate id or digest), or undefined for any other failure. */
function duplicateOf(err: unknown, id: string): KeyConflictError | undefined {
  const cause = (err as { cause?: unknown }).cause;
  if (!(err instanceof KeyStoreUnavailableError) || errnoOf(cause) !== ER_DUP_ENTRY) return undefined;
  const message = String((cause as { message?: unknown }).message ?? '');
  return /keys_hash/.test(message)
    ? new KeyConflictError('a key with the same digest already exists', { keyId: id })
    : new KeyConflictError(`a key with id ${quote(id)} already exists`, { keyId: id });
}
