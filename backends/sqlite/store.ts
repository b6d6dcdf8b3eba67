import { InvalidInputError, type KeyStoreUnavailableError, type TelemetryOptions } from 'keygate';
import { CAPABILITIES, type Capabilities, type ChangeRelay, type KeyChange, quote } from 'keygate/store-kit';
import { pollChanges } from '../sql/change-poller.js';
import type { SqlEngine } from '../sql/engine.js';
import { type KeyDialect, SqlKeyStore } from '../sql/key-store.js';
import { CHANGE_SQL, SQLITE_KEYS, USAGE_SQL } from '../sql/sqlite/keys.js';
import type { RunInfo, SqlTx } from '../sql/step.js';
import { SqliteAuditLog } from './audit-log.js';
import { sqliteChangeFeed } from './change-poller.js';
import type { SqliteDatabase, SqliteDriver } from './driver.js';
import { storeError } from './errors.js';
import { migrateKeyStore } from './migrate.js';
import { sqliteConnection } from './options.js';
import { SqliteOutbox } from './outbox.js';

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

// Every member of {@link SqliteKeyStoreOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({
  database: true,
  pollIntervalMs: true,
  busyTimeoutMs: true,
  changeRetentionMs: true,
  onError: true,
  telemetry: true,
} satisfies Record<keyof SqliteKeyStoreOptions, true>);

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
export class SqliteKeyStore extends SqlKeyStore<SqlTx> {
  /**
   * Its `changes` (every write, polled across processes), `usage`, `audit` and `auditedWrites` (see
   * `SqliteAuditLog`: the entry handed with a key write goes in its transaction) and `outbox` (see
   * `SqliteOutbox`: events handed with a write go in its transaction too).
   */
  declare readonly [CAPABILITIES]: Capabilities;
  /** Milliseconds between two reads of the change table. */
  readonly pollIntervalMs: number;
  /** Milliseconds a write waits for the write lock. */
  readonly busyTimeoutMs: number;
  private readonly driver: SqliteDriver;

  constructor(options: SqliteKeyStoreOptions) {
    const { driver, busyTimeoutMs, engine } = sqliteConnection(options);
    const retentionMs = validRetentionMs(options.changeRetentionMs);
    const outbox = new SqliteOutbox({ database: driver, busyTimeoutMs });
    super(
      { ...sqliteKeyDialect(engine, retentionMs, outbox), migrate: () => migrateKeyStore(driver, busyTimeoutMs) },
      options,
      { where: 'SqliteKeyStore', names: OPTION_NAMES },
    );
    this.driver = driver;
    this.pollIntervalMs = validPollIntervalMs(options.pollIntervalMs);
    this.busyTimeoutMs = busyTimeoutMs;
    const audit = new SqliteAuditLog({ database: driver, busyTimeoutMs });
    this[CAPABILITIES] = { changes: this, usage: this, audit, auditedWrites: audit, outbox };
  }

  // The first poll, and the first after a failed one, deliver a resync.
  protected listen(relay: ChangeRelay): () => void {
    const pace = { intervalMs: this.pollIntervalMs, maxBackoffMs: this.pollIntervalMs, resyncAfterFailure: true };
    return pollChanges(sqliteChangeFeed(this.driver), pace, {
      onChange: (change) => relay.emit(change),
      onResync: () => relay.emit({ type: 'resync' }),
      onError: (err) => this.reportError(storeError(err) as KeyStoreUnavailableError),
    });
  }
}

/** The SQLite engine under the key store: the driver answers at once, so a transaction is one synchronous call. */
function sqliteKeyDialect(
  engine: SqlEngine,
  retentionMs: number,
  outbox: SqliteOutbox,
): Omit<KeyDialect<SqlTx>, 'migrate'> {
  return {
    ...engine,
    engine: 'sqlite',
    ...SQLITE_KEYS,
    appendEvents: (tx, events) => outbox.appendIn(tx, events),
    // Inside the write's transaction: the change is announced if and only if the write commits.
    *announce(tx, change: KeyChange) {
      const now = Date.now();
      const { insertId } = (yield tx.run(CHANGE_SQL.append, [now, JSON.stringify(change)])) as RunInfo;
      if (Number(insertId) % PRUNE_EVERY === 0) yield tx.run(CHANGE_SQL.prune, [now - retentionMs]);
    },
    *addUsage(tx, { counts, activity }) {
      for (const c of counts) yield tx.run(USAGE_SQL.addCount, [c.keyId, c.accountId, c.day, c.outcome, c.count]);
      for (const a of activity) {
        yield tx.run(USAGE_SQL.setActivity, [a.keyId, new Date(a.lastUsedAt).toISOString(), a.lastUsedIp]);
      }
    },
  };
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
