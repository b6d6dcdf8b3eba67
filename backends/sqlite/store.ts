import {
  InvalidInputError,
  KeyConflictError,
  KeyNotFoundError,
  type KeyStoreUnavailableError,
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
  quote,
  type Telemetry,
  type UsageBatch,
  type UsageCount,
  type UsageOutcome,
  type UsageStore,
  type WritableKeyStore,
  type WriteOptions,
} from 'keygate/store-kit';
import { SqliteAuditLog } from './audit-log.js';
import { pollChanges } from './change-poller.js';
import { type SqliteDatabase, type SqliteDriver, sqliteDriver } from './driver.js';
import { guarded, storeError, uniqueViolation } from './errors.js';
import { migrateKeyStore } from './migrate.js';
import { SqliteOutbox } from './outbox.js';
import { iso, type KeyRow, recordOf, recordParams, updateParams } from './rows.js';
import { CHANGE_SQL, KEY_COLUMNS, KEY_SQL, USAGE_SQL } from './sql/keys.js';
import { validBusyTimeoutMs } from './timeouts.js';

/**
 * Options of {@link SqliteKeyStore}.
 *
 * @example
 * const options: SqliteKeyStoreOptions = { database: new Database('keygate.db'), pollIntervalMs: 100 };
 */
export interface SqliteKeyStoreOptions {
  /**
   * A `better-sqlite3` Database or a `node:sqlite` DatabaseSync (Node 22.5+), opened on a file (or a
   * `SqliteDriver`). The caller owns it and closes it.
   */
  database: SqliteDatabase;
  /**
   * How often this instance reads the change table once something subscribed (a `CachedKeyStore`
   * does): a change written by another process reaches this process's caches within about this
   * many milliseconds. At least 10, at most 1,000.
   *
   * @default 250
   */
  pollIntervalMs?: number;
  /**
   * How long a write waits for the file's write lock (SQLite's `busy_timeout`, set on the connection
   * before each write) before it fails with `KeyStoreUnavailableError`, in milliseconds.
   *
   * @default 2000
   */
  busyTimeoutMs?: number;
  /**
   * How long rows of the change table are kept, in milliseconds: an instance whose polls stop for
   * longer (a process paused in a debugger) misses changes and drops every cached record instead.
   *
   * @default 600000 (10 minutes)
   */
  changeRetentionMs?: number;
  /** Called when a poll of the change table fails (the next poll is scheduled, then every cache resyncs). Default: ignore. */
  onError?: (err: KeyStoreUnavailableError) => void;
  /** Where to report lookups by digest, for a store used without a `CachedKeyStore`. @default undefined (none) */
  telemetry?: TelemetryOptions;
}

// Writers prune the change table at every 64th change: cheap, and the table only grows by writes.
const PRUNE_EVERY = 64;

/**
 * A key store in a SQLite file, shared by every process on the machine that opens the file: through
 * `better-sqlite3` on Node 20+, or `node:sqlite` where Node has it (22.5+). Lookups by digest use a
 * unique index; every write is one `BEGIN IMMEDIATE` transaction (SQLite's one writer at a time) that
 * refuses revoked keys, bumps `version` and appends the change to `keygate_changes`. Each instance
 * that has subscribers polls that table every `pollIntervalMs`, so a `CachedKeyStore` in any process
 * drops a revoked key within about `pollIntervalMs` (250 ms by default). SQLITE_BUSY past
 * `busyTimeoutMs`, an I/O error or a closed database throws `KeyStoreUnavailableError` (503).
 *
 * @example
 * import Database from 'better-sqlite3';
 * const store = new SqliteKeyStore({ database: new Database('keygate.db') });
 * await store.migrate(); // at start-up: WAL mode, then the tables
 * const keys = new KeyManager({ store });
 * const cached = new CachedKeyStore(store, { ttlMs: 30_000 });
 */
export class SqliteKeyStore implements WritableKeyStore, UsageStore, Capable {
  /**
   * Its `changes` (every write, polled across processes), `usage`, `audit` (see `SqliteAuditLog`) and
   * `outbox` (see `SqliteOutbox`: events handed with a write go in its transaction).
   */
  declare readonly [CAPABILITIES]: Capabilities;
  /** Milliseconds between two reads of the change table. */
  readonly pollIntervalMs: number;
  /** Milliseconds a write waits for the write lock. */
  readonly busyTimeoutMs: number;
  private readonly driver: SqliteDriver;
  private readonly telemetry: Telemetry | undefined;
  private readonly relay = new ChangeRelay();
  private readonly outbox: SqliteOutbox;
  private readonly retentionMs: number;
  private readonly onError: (err: KeyStoreUnavailableError) => void;
  private stopPolling: (() => void) | undefined;
  private closed = false;

  constructor(options: SqliteKeyStoreOptions) {
    this.driver = sqliteDriver(options?.database);
    this.pollIntervalMs = validPollIntervalMs(options.pollIntervalMs);
    this.busyTimeoutMs = validBusyTimeoutMs(options.busyTimeoutMs, 2_000);
    this.retentionMs = validRetentionMs(options.changeRetentionMs);
    this.telemetry = createTelemetry(options.telemetry);
    this.onError = options.onError ?? (() => {});
    this.outbox = new SqliteOutbox({ database: this.driver, busyTimeoutMs: this.busyTimeoutMs });
    this[CAPABILITIES] = {
      changes: this,
      usage: this,
      audit: new SqliteAuditLog({ database: this.driver, busyTimeoutMs: this.busyTimeoutMs }),
      outbox: this.outbox,
    };
  }

  /**
   * Puts the file in WAL mode and creates or upgrades the tables. Idempotent: versions already
   * applied (recorded in `keygate_migrations`) are skipped; concurrent callers, in any process, are
   * serialised by the write lock. Never run implicitly.
   *
   * @example
   * await store.migrate(); // { applied: [1] }, then { applied: [] }
   */
  migrate(): Promise<{ applied: number[] }> {
    return guarded(() => migrateKeyStore(this.driver, this.busyTimeoutMs));
  }

  findByHash(hash: string): Promise<ApiKeyRecord | null> {
    return observedLookup(this.telemetry, 'sqlite', () => this.one(KEY_SQL.byHash, hash));
  }

  findById(id: string): Promise<ApiKeyRecord | null> {
    return this.one(KEY_SQL.byId, id);
  }

  listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
    return guarded(() => this.driver.all<KeyRow>(KEY_SQL.byAccount, [accountId]).map(recordOf));
  }

  async insert(record: ApiKeyRecord, options?: WriteOptions): Promise<ApiKeyRecord> {
    const stored = { ...record, version: 1 };
    const change = changeOf('created', stored);
    let created: ApiKeyRecord;
    try {
      created = this.driver.transaction(() => {
        const row = this.driver.get<KeyRow>(`${KEY_SQL.insert} RETURNING ${KEY_COLUMNS}`, recordParams(stored));
        if (options?.events?.length) this.outbox.appendIn(options.events);
        this.announce(change);
        return recordOf(row as KeyRow);
      }, this.busyTimeoutMs);
    } catch (err) {
      throw duplicateOf(err, record.id) ?? storeError(err);
    }
    this.relay.emit(change);
    return created;
  }

  async update(id: string, patch: KeyPatch, condition?: WriteOptions): Promise<ApiKeyRecord> {
    let written: { next: ApiKeyRecord; change: KeyChange };
    try {
      written = this.driver.transaction(() => {
        const row = this.driver.get<KeyRow>(KEY_SQL.byId, [id]);
        if (!row) throw new KeyNotFoundError(id);
        // The shared patch semantics: KeyRevokedError for a revoked key, KeyConflictError for a version
        // other than `ifVersion`; the transaction holds the write lock, so the check is atomic.
        const next = applyPatch(recordOf(row), patch, condition);
        this.driver.run(KEY_SQL.update, updateParams(next));
        if (condition?.events?.length) this.outbox.appendIn(condition.events);
        const change = changeOf(next.status === 'revoked' ? 'revoked' : 'updated', next);
        this.announce(change);
        return { next, change };
      }, this.busyTimeoutMs);
    } catch (err) {
      throw storeError(err);
    }
    this.relay.emit(written.change);
    return written.next;
  }

  /** Adds a flush of usage counts in one transaction: each (key, day, outcome) is an upsert that adds up. */
  async addUsage(batch: UsageBatch): Promise<void> {
    const { counts, activity } = mergeUsage(batch);
    if (counts.length === 0 && activity.length === 0) return;
    try {
      this.driver.transaction(() => {
        for (const c of counts) this.driver.run(USAGE_SQL.addCount, [c.keyId, c.accountId, c.day, c.outcome, c.count]);
        for (const a of activity) this.driver.run(USAGE_SQL.setActivity, [a.keyId, iso(a.lastUsedAt), a.lastUsedIp]);
      }, this.busyTimeoutMs);
    } catch (err) {
      throw storeError(err);
    }
  }

  getUsage(keyId: string, from: string, to: string): Promise<UsageCount[]> {
    return guarded(() =>
      this.driver
        .all<{ account_id: string; day: string; outcome: string; count: number }>(USAGE_SQL.counts, [keyId, from, to])
        .map((r) => ({
          keyId,
          accountId: r.account_id,
          day: r.day,
          outcome: r.outcome as UsageOutcome,
          count: Number(r.count),
        })),
    );
  }

  getActivity(keyId: string): Promise<KeyActivity | null> {
    return guarded(() => {
      const row = this.driver.get<{ last_used_at: string; last_used_ip: string | null }>(USAGE_SQL.activity, [keyId]);
      return row ? { keyId, lastUsedAt: iso(row.last_used_at), lastUsedIp: row.last_used_ip } : null;
    });
  }

  /**
   * Subscribes to changes made by this instance and, through the change table, by every other
   * instance on the file. The first subscription starts polling (every `pollIntervalMs`); the first
   * poll, and the first after a failed one, deliver `{ type: 'resync' }`.
   */
  subscribe(listener: (change: KeyChangeEvent) => void): () => void {
    const off = this.relay.subscribe(listener);
    if (!this.stopPolling && !this.closed) {
      this.stopPolling = pollChanges(this.driver, this.pollIntervalMs, {
        onChange: (change) => this.relay.emit(change),
        onResync: () => this.relay.emit({ type: 'resync' }),
        onError: (err) => this.onError(storeError(err) as KeyStoreUnavailableError),
      });
    }
    return () => {
      off();
      if (this.relay.listeners === 0) this.stop();
    };
  }

  /** Stops polling. The database stays open: it is the caller's. */
  close(): void {
    this.closed = true;
    this.stop();
  }

  private stop(): void {
    this.stopPolling?.();
    this.stopPolling = undefined;
  }

  private one(sql: string, value: string): Promise<ApiKeyRecord | null> {
    return guarded(() => {
      const row = this.driver.get<KeyRow>(sql, [value]);
      return row ? recordOf(row) : null;
    });
  }

  // Inside the write's transaction: the change is announced if and only if the write commits.
  private announce(change: KeyChange): void {
    const now = Date.now();
    const { lastInsertRowid } = this.driver.run(CHANGE_SQL.append, [now, JSON.stringify(change)]);
    if (Number(lastInsertRowid) % PRUNE_EVERY === 0) this.driver.run(CHANGE_SQL.prune, [now - this.retentionMs]);
  }
}

/** The conflict a failed INSERT stands for (a duplicate id or digest), or undefined for any other failure. */
function duplicateOf(err: unknown, id: string): KeyConflictError | undefined {
  const column = uniqueViolation(err);
  if (column === 'keygate_keys.hash') {
    return new KeyConflictError('a key with the same digest already exists', { keyId: id });
  }
  if (column === 'keygate_keys.id')
    return new KeyConflictError(`a key with id ${quote(id)} already exists`, { keyId: id });
  return undefined;
}

function validPollIntervalMs(value: unknown): number {
  if (value === undefined) return 250;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 10 || value > 1_000) {
    throw new InvalidInputError(
      'pollIntervalMs',
      `pollIntervalMs must be a number from 10 to 1000, got ${quote(value)}`,
    );
  }
  return value;
}

function validRetentionMs(value: unknown): number {
  if (value === undefined) return 600_000;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1_000) {
    throw new InvalidInputError(
      'changeRetentionMs',
      `changeRetentionMs must be a number of at least 1000, got ${quote(value)}`,
    );
  }
  return value;
}
