import { KeyNotFoundError, type KeyStoreUnavailableError, type TelemetryOptions } from 'keygate';
import {
  type ApiKeyRecord,
  applyPatch,
  CAPABILITIES,
  type Capabilities,
  type Capable,
  ChangeRelay,
  changeOf,
  checkOptionNames,
  createTelemetry,
  type KeyActivity,
  type KeyChange,
  type KeyChangeEvent,
  type KeyPatch,
  mergeUsage,
  type OutboxEvent,
  observedLookup,
  type PruneArgs,
  type PruneResult,
  pruneCutoffMs,
  type Telemetry,
  type UsageBatch,
  type UsageCount,
  type UsageOutcome,
  type UsageStore,
  utcDay,
  validAuditEntries,
  validPruneArgs,
  type WritableKeyStore,
  type WriteOptions,
} from 'keygate/store-kit';
import { insertAuditEntries } from './audit-log.js';
import type { SqlEngine } from './engine.js';
import { type DuplicateKey, keyConflict } from './key-conflict.js';
import {
  KEY_COLUMNS,
  type KeyRow,
  keyInsertParams,
  keyRecordOf,
  keyUpdateParams,
  keyUpdateSql,
  marks,
} from './key-record.js';
import { holdsNul } from './nul.js';
import type { GivenOptions } from './options.js';
import { batchDelete, deleteInBatches } from './prune.js';
import type { SqlTx, Step } from './step.js';
import { wait } from './step.js';

/** The usage a flush adds: counts per key, day and outcome, and each key's last use. */
export type MergedUsage = ReturnType<typeof mergeUsage>;

/**
 * What the key store needs of an engine: where the keys live, how instants are stored, how a
 * transaction runs (every answer a keygate error), and the statements that differ. Statements are
 * written with `?` placeholders; the dialect's transaction rewrites them for its driver.
 *
 * @example
 * const dialect: KeyDialect<SqlTx> = { ...engine, engine: 'sqlite', lockRow: '', returning: true, ... };
 */
export interface KeyDialect<X extends SqlTx> extends SqlEngine<X> {
  /** The `backend` label of lookup telemetry. */
  readonly engine: string;
  /** Appended to the SELECT that reads a row before an update (' FOR UPDATE'), or '' where the transaction locks the file. */
  readonly lockRow: string;
  /** Whether an INSERT can answer its row (`RETURNING`); otherwise the row is read back by id. */
  readonly returning: boolean;
  /** Reads of the usage tables, each with ? key id (and ? from, ? to days for `counts`). */
  readonly usageSql: { counts: string; activity: string };
  /** Which unique constraint of the key table a failed insert broke, if any. */
  duplicate(err: unknown): DuplicateKey;
  /** Inserts outbox events in the write's transaction; absent where the engine keeps no outbox (D1). */
  appendEvents?(tx: X, events: readonly OutboxEvent[]): Step<void>;
  /**
   * Announces a change in the write's transaction, so that it goes out if and only if the write
   * commits; absent where the engine has no channel between processes (D1).
   */
  announce?(tx: X, change: KeyChange): Step<void>;
  /** Adds a flush of usage in one transaction. */
  addUsage(tx: X, usage: MergedUsage): Step<void>;
  /** Creates or upgrades the key store's tables under the engine's migration lock. */
  migrate(): Promise<{ applied: number[] }>;
}

/**
 * The key store every SQL engine shares: lookups, inserts and row-locked updates in one transaction
 * with the outbox events, the audit entries (`WriteOptions.audit`, into the engine's `audit` table)
 * and the change announcement, usage upserts, and subscriptions relayed from the engine's change
 * channel. A backend class extends it with its options, `migrate()` and channel, and declares the
 * `audit` log over the same engine as its `audit` and `auditedWrites` capabilities.
 *
 * @example
 * export class SqliteKeyStore extends SqlKeyStore<SqliteTx> { ... }
 */
export abstract class SqlKeyStore<X extends SqlTx> implements WritableKeyStore, UsageStore, Capable {
  declare readonly [CAPABILITIES]: Capabilities;
  protected readonly relay = new ChangeRelay();
  protected readonly telemetry: Telemetry | undefined;
  private readonly keys: string;
  private readonly byId: string;
  private stopChanges: (() => void) | undefined;
  private closed = false;

  private readonly onError: (err: KeyStoreUnavailableError) => void;

  /**
   * `options`: the backend's own, of which the core reads `telemetry` and `onError`; a member
   * `own.names` does not list is refused (`InvalidInputError`, reason `unknown_option`) first.
   */
  protected constructor(
    private readonly dialect: KeyDialect<X>,
    options: { telemetry?: TelemetryOptions; onError?: (err: KeyStoreUnavailableError) => void },
    own: Omit<GivenOptions, 'options'>,
  ) {
    checkOptionNames(options, own.names, own.where);
    this.telemetry = createTelemetry(options.telemetry);
    this.onError = options.onError ?? (() => {});
    this.keys = dialect.table('keys');
    this.byId = `SELECT ${KEY_COLUMNS} FROM ${this.keys} WHERE id = ?`;
  }

  /**
   * Creates or upgrades the tables. Idempotent: versions already applied (recorded in the engine's
   * migrations table) are skipped, and the engine's migration lock (an advisory lock, `GET_LOCK`,
   * SQLite's write lock, one D1 batch) serialises concurrent callers. Never run implicitly.
   *
   * @example
   * await store.migrate(); // at start-up, before the first request; a second call does nothing
   */
  migrate(): Promise<{ applied: number[] }> {
    return this.dialect.migrate();
  }

  /**
   * Starts the engine's change channel: changes made by other processes go to `relay`, and
   * `{ type: 'resync' }` each time the channel (re)starts. Returns how to stop it.
   */
  protected abstract listen(relay: ChangeRelay): () => void;

  /** Reports a failure of the change channel (which retries by itself) to the `onError` option. */
  protected reportError(err: KeyStoreUnavailableError): void {
    this.onError(err);
  }

  findByHash(hash: string): Promise<ApiKeyRecord | null> {
    return observedLookup(this.telemetry, this.dialect.engine, () =>
      this.one(`SELECT ${KEY_COLUMNS} FROM ${this.keys} WHERE hash = ?`, hash),
    );
  }

  // An id or account with a NUL names no key (and PostgreSQL would refuse the parameter): not found, no query.
  async findById(id: string): Promise<ApiKeyRecord | null> {
    if (holdsNul(id)) return null;
    return this.one(this.byId, id);
  }

  async listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
    if (holdsNul(accountId)) return [];
    const { keys } = this;
    const { time } = this.dialect;
    return this.dialect.runner.read(function* (tx) {
      const sql = `SELECT ${KEY_COLUMNS} FROM ${keys} WHERE account_id = ? ORDER BY created_at, id`;
      return (yield* wait(tx.all<KeyRow>(sql, [accountId]))).map((row) => keyRecordOf(row, time));
    });
  }

  async insert(record: ApiKeyRecord, options?: WriteOptions): Promise<ApiKeyRecord> {
    const { dialect, byId, keys } = this;
    const entries = validAuditEntries(options?.audit);
    const stored = { ...record, version: 1 };
    const change = changeOf('created', stored);
    const insert = `INSERT INTO ${keys} (${KEY_COLUMNS}) VALUES (${marks(20)})`;
    const row = await dialect.runner
      .transaction(function* (tx) {
        const params = keyInsertParams(stored, dialect.time);
        let rows: KeyRow[];
        if (dialect.returning) rows = yield* wait(tx.all<KeyRow>(`${insert} RETURNING ${KEY_COLUMNS}`, params));
        else {
          yield* wait(tx.run(insert, params));
          rows = yield* wait(tx.all<KeyRow>(byId, [record.id]));
        }
        if (options?.events?.length && dialect.appendEvents) yield* dialect.appendEvents(tx, options.events);
        if (entries.length > 0) yield* insertAuditEntries(tx, dialect, entries);
        if (dialect.announce) yield* dialect.announce(tx, change);
        return rows[0] as KeyRow;
      })
      .catch((err: unknown) => {
        throw keyConflict(dialect.duplicate(err), record.id) ?? err;
      });
    const created = keyRecordOf(row, dialect.time);
    this.relay.emit(change);
    return created;
  }

  async update(id: string, patch: KeyPatch, condition?: WriteOptions): Promise<ApiKeyRecord> {
    if (holdsNul(id)) throw new KeyNotFoundError(id);
    const { dialect, byId, keys } = this;
    const entries = validAuditEntries(condition?.audit);
    const { next, change } = await dialect.runner.transaction(function* (tx) {
      const [row] = yield* wait(tx.all<KeyRow>(`${byId}${dialect.lockRow}`, [id]));
      if (!row) throw new KeyNotFoundError(id);
      // The shared patch semantics: KeyRevokedError for a revoked key, KeyConflictError for a version
      // other than `ifVersion`, so the transaction rolls back. The row (or write) lock makes the check atomic.
      const next = applyPatch(keyRecordOf(row, dialect.time), patch, condition);
      yield* wait(tx.run(keyUpdateSql(keys), keyUpdateParams(next, dialect.time)));
      if (condition?.events?.length && dialect.appendEvents) yield* dialect.appendEvents(tx, condition.events);
      if (entries.length > 0) yield* insertAuditEntries(tx, dialect, entries);
      const change = changeOf(next.status === 'revoked' ? 'revoked' : 'updated', next);
      if (dialect.announce) yield* dialect.announce(tx, change);
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
    const usage = mergeUsage(batch);
    if (usage.counts.length === 0 && usage.activity.length === 0) return;
    const { dialect } = this;
    await dialect.runner.transaction((tx) => dialect.addUsage(tx, usage));
  }

  async getUsage(keyId: string, from: string, to: string): Promise<UsageCount[]> {
    if (holdsNul(keyId)) return [];
    const sql = this.dialect.usageSql.counts;
    return this.dialect.runner.read(function* (tx) {
      type Row = { account_id: string; day: string; outcome: string; count: string | number };
      return (yield* wait(tx.all<Row>(sql, [keyId, from, to]))).map((r) => ({
        keyId,
        accountId: r.account_id,
        day: r.day,
        outcome: r.outcome as UsageOutcome,
        count: Number(r.count),
      }));
    });
  }

  async getActivity(keyId: string): Promise<KeyActivity | null> {
    if (holdsNul(keyId)) return null;
    const { usageSql, time } = this.dialect;
    return this.dialect.runner.read(function* (tx) {
      type Row = { last_used_at: Date | string; last_used_ip: string | null };
      const [row] = yield* wait(tx.all<Row>(usageSql.activity, [keyId]));
      return row ? { keyId, lastUsedAt: time.read(row.last_used_at), lastUsedIp: row.last_used_ip } : null;
    });
  }

  /**
   * Deletes the usage counts of the UTC days that ended more than `olderThanMs` ago, on the index
   * `(day)` in batches of 1,000 rows, each its own transaction. Each key's last use stays.
   */
  async prune(args: PruneArgs): Promise<PruneResult> {
    const before = utcDay(pruneCutoffMs(validPruneArgs(args, 'UsageStore.prune').olderThanMs));
    const sql = batchDelete(this.dialect, this.dialect.table('usage'), '(key_id, day, outcome)', 'day < ?', 'day');
    return { deleted: await deleteInBatches(this.dialect.runner, sql, [before]) };
  }

  /**
   * Subscribes to changes made by this instance (at once) and, through the engine's change channel,
   * by every other process on the same database. The first subscription starts the channel; each time
   * it (re)starts from where it can no longer tell what it missed, listeners get `{ type: 'resync' }`.
   */
  subscribe(listener: (change: KeyChangeEvent) => void): () => void {
    const off = this.relay.subscribe(listener);
    if (!this.stopChanges && !this.closed) this.stopChanges = this.listen(this.relay);
    return () => {
      off();
      if (this.relay.listeners === 0) this.stop();
    };
  }

  /** Stops the change channel. The connection or pool stays open: it is the caller's. */
  close(): void {
    this.closed = true;
    this.stop();
  }

  private stop(): void {
    this.stopChanges?.();
    this.stopChanges = undefined;
  }

  private one(sql: string, value: string): Promise<ApiKeyRecord | null> {
    const { time } = this.dialect;
    return this.dialect.runner.read(function* (tx) {
      const [row] = yield* wait(tx.all<KeyRow>(sql, [value]));
      return row ? keyRecordOf(row, time) : null;
    });
  }
}
