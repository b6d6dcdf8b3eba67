import type { TelemetryOptions } from 'keygate';
import { KeyConflictError, KeyNotFoundError } from 'keygate';
import {
  type ApiKeyRecord,
  type AuditEntry,
  applyPatch,
  CAPABILITIES,
  type Capabilities,
  changeOf,
  type KeyPatch,
  mergeUsage,
  observedLookup,
  quote,
  type UsageBatch,
  validAuditEntries,
  type WriteOptions,
} from 'keygate/store-kit';
import { auditInsertSql, auditRowParams } from '../../sql/audit-log.js';
import { keyConflict } from '../../sql/key-conflict.js';
import {
  ISO_TIME,
  KEY_COLUMNS,
  type KeyRow,
  keyInsertParams,
  keyRecordOf,
  keyUpdateParams,
} from '../../sql/key-record.js';
import { SqlKeyStore } from '../../sql/key-store.js';
import { KEY_SQL, SQLITE_KEYS, USAGE_SQL } from '../../sql/sqlite/keys.js';
import { sqliteDuplicateKey } from '../../sql/sqlite/unique.js';
import type { SqlTx } from '../../sql/step.js';
import { D1AuditLog } from './audit-log.js';
import type { D1Like, D1StatementLike, KVLike } from './bindings.js';
import { d1Engine } from './d1-tx.js';
import { d1Error, d1Guarded, validD1 } from './errors.js';
import { KvRecordCache, validKv, validMaxStaleMs } from './kv-cache.js';
import { migrateD1 } from './migrate.js';

/**
 * Options of {@link D1KeyStore}.
 *
 * @example
 * const options: D1KeyStoreOptions = { db: env.DB, cache: env.KEYS, maxStaleMs: 30_000 };
 */
export interface D1KeyStoreOptions {
  /** The D1 database binding (`env.DB`) that holds the keys. */
  db: D1Like;
  /**
   * A Workers KV namespace (`env.KEYS`) in front of D1 for lookups by digest. Each found record is
   * kept with the time it was read; it is served only while younger than `maxStaleMs`.
   *
   * @default undefined (every lookup reads D1)
   */
  cache?: KVLike;
  /**
   * How old a record from the KV cache may be, in milliseconds, counted from when it was read from D1:
   * a key revoked by any writer is refused everywhere at most this long after. Positive.
   *
   * @default 30_000
   */
  maxStaleMs?: number;
  /** The clock the staleness bound is measured with, in epoch milliseconds. @default Date.now */
  clock?: () => number;
  /** Where to report lookups by digest. @default undefined (none) */
  telemetry?: TelemetryOptions;
}

// Every member of {@link D1KeyStoreOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({
  db: true,
  cache: true,
  maxStaleMs: true,
  clock: true,
  telemetry: true,
} satisfies Record<keyof D1KeyStoreOptions, true>);

// A write reads the row, then writes it only if its version is still the one read; when another
// writer got in between it waits a moment (random, growing) and reads again, this many times at most.
const WRITE_ATTEMPTS = 64;
const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));

/**
 * A key store in Cloudflare D1, for Workers: the tables of `keygate/sqlite` (one schema, one migration
 * history), with D1's asynchronous API. D1 has no interactive transaction, so an update reads the row,
 * applies the patch, and writes it with one conditional `UPDATE ... WHERE id = ? AND version = ?`
 * (and a trigger refuses any change to a revoked row): a concurrent writer never loses a change, and
 * a revoked key stays revoked. A write's audit entries go in one `batch` with it (each kept only if
 * the UPDATE changed the row), so the key change and its entry are stored together or not at all. Usage counts are upserts sent in one `batch` (atomic).
 *
 * With `cache` (a KV namespace), lookups by digest read KV first and serve a record only while it is
 * younger than `maxStaleMs`; otherwise D1 answers and the record is stored in KV again. A failing D1
 * throws `KeyStoreUnavailableError` (503 through `authenticate`): a cached entry is never served past
 * the bound. Writes through this store delete the record's KV entry.
 *
 * `migrate()` applies the tables in one `batch`; a deploy script may apply `KEY_STORE_MIGRATIONS`
 * with `wrangler d1 execute` instead.
 *
 * Capabilities: `changes` (the writes made through this instance only: a Worker has no long-lived
 * subscriber, so there is no channel between isolates; `maxStaleMs` bounds what other writers'
 * changes take), `usage`, `audit` and `auditedWrites` (a {@link D1AuditLog} on the same database:
 * the entry a `KeyManager` hands with a key write goes in the same `batch` as the write).
 *
 * @example
 * export default {
 *   async fetch(request, env) {
 *     const store = new D1KeyStore({ db: env.DB, cache: env.KEYS, maxStaleMs: 30_000 });
 *     const result = await authenticate({ headers: request.headers, ip: request.headers.get('cf-connecting-ip') ?? undefined }, store);
 *     return result.ok ? new Response('hello') : Response.json({ error: result.code }, { status: result.status });
 *   },
 * };
 */
export class D1KeyStore extends SqlKeyStore<SqlTx> {
  /** `changes` (this instance's writes), `usage`, and `audit` and `auditedWrites` (entries written in the key write's batch). */
  declare readonly [CAPABILITIES]: Capabilities;
  /** Milliseconds a KV-cached record may be served after it was read from D1. */
  readonly maxStaleMs: number;
  private readonly db: D1Like;
  private readonly cache: KvRecordCache | undefined;
  private readonly clock: () => number;

  constructor(options: D1KeyStoreOptions) {
    const db = validD1(options?.db);
    super(
      {
        ...d1Engine(db),
        engine: 'd1',
        ...SQLITE_KEYS,
        migrate: () => migrateD1(db),
        // Writes go through the overrides below; nothing else runs in a transaction.
        addUsage: () => {
          throw new Error('keygate: D1 adds usage in one batch');
        },
      },
      options,
      { where: 'D1KeyStore', names: OPTION_NAMES },
    );
    this.db = db;
    this.maxStaleMs = validMaxStaleMs(options.maxStaleMs);
    this.clock = options.clock ?? Date.now;
    const kv = validKv(options.cache);
    this.cache = kv ? new KvRecordCache(kv, this.maxStaleMs, this.clock) : undefined;
    const audit = new D1AuditLog({ db });
    this[CAPABILITIES] = { changes: this, usage: this, audit, auditedWrites: audit };
  }

  override findByHash(hash: string): Promise<ApiKeyRecord | null> {
    return observedLookup(this.telemetry, 'd1', () => this.lookup(hash));
  }

  /**
   * Inserts the record; with audit entries (`WriteOptions.audit`), the record and its entries go in
   * one `batch` (atomic): both are stored, or, on a duplicate id or digest, neither.
   */
  override async insert(record: ApiKeyRecord, options?: WriteOptions): Promise<ApiKeyRecord> {
    const entries = validAuditEntries(options?.audit);
    if (entries.length === 0) return super.insert(record, options);
    const stored = { ...record, version: 1 };
    const statements = [
      this.db.prepare(`${KEY_SQL.insert} RETURNING ${KEY_COLUMNS}`).bind(...keyInsertParams(stored, ISO_TIME)),
      ...this.auditStatements(entries, false),
    ];
    let row: KeyRow | undefined;
    try {
      row = (await this.db.batch<KeyRow>(statements))[0]?.results[0];
    } catch (err) {
      const failure = d1Error(err);
      throw keyConflict(sqliteDuplicateKey(failure), record.id) ?? failure;
    }
    if (!row) throw d1Error(new Error('the INSERT answered no row'));
    this.relay.emit(changeOf('created', stored));
    return keyRecordOf(row, ISO_TIME);
  }

  override async update(id: string, patch: KeyPatch, condition?: WriteOptions): Promise<ApiKeyRecord> {
    const entries = validAuditEntries(condition?.audit);
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const current = await this.findById(id);
      if (!current) throw new KeyNotFoundError(id);
      // KeyRevokedError for a revoked key, KeyConflictError for a version other than `ifVersion`.
      const next = applyPatch(current, patch, condition);
      const write = this.db
        .prepare(`${KEY_SQL.update} AND version = ? AND status <> 'revoked'`)
        .bind(...keyUpdateParams(next, ISO_TIME), current.version);
      let changes: number | undefined;
      try {
        // With entries: one batch (atomic), each entry kept only if the UPDATE wrote the row.
        const results =
          entries.length === 0
            ? [await write.run()]
            : await this.db.batch([write, ...this.auditStatements(entries, true)]);
        changes = results[0]?.meta.changes;
      } catch (err) {
        throw d1Error(err);
      }
      if (changes === 1) {
        await this.cache?.wrote(next);
        this.relay.emit(changeOf(next.status === 'revoked' ? 'revoked' : 'updated', next));
        return next;
      }
      // Another writer changed the row since it was read: read it again (a revocation is then final).
      await backoff(attempt + 1);
    }
    throw new KeyConflictError(`key ${quote(id)} kept changing under ${WRITE_ATTEMPTS} attempts to write it`, {
      keyId: id,
    });
  }

  // The INSERTs of a write's audit entries, for its batch (see auditInsertSql).
  private auditStatements(entries: readonly AuditEntry[], afterAChange: boolean): D1StatementLike[] {
    const sql = auditInsertSql('keygate_audit', afterAChange);
    return entries.map((entry) => this.db.prepare(sql).bind(...auditRowParams(entry, ISO_TIME)));
  }

  /** Adds a flush of usage counts in one `batch` (atomic): each (key, day, outcome) is an upsert that adds up. */
  override async addUsage(batch: UsageBatch): Promise<void> {
    const { counts, activity } = mergeUsage(batch);
    if (counts.length === 0 && activity.length === 0) return;
    const statements = [
      ...counts.map((c) => this.db.prepare(USAGE_SQL.addCount).bind(c.keyId, c.accountId, c.day, c.outcome, c.count)),
      ...activity.map((a) =>
        this.db.prepare(USAGE_SQL.setActivity).bind(a.keyId, ISO_TIME.write(a.lastUsedAt), a.lastUsedIp),
      ),
    ];
    await d1Guarded(() => this.db.batch(statements));
  }

  // A Worker has no long-lived subscriber: changes reach this instance's subscribers only.
  protected listen(): () => void {
    return () => {};
  }

  private async lookup(hash: string): Promise<ApiKeyRecord | null> {
    const hit = await this.cache?.get(hash);
    if (hit) return hit;
    const at = this.clock();
    let row: KeyRow | null;
    try {
      row = await this.db.prepare(KEY_SQL.byHash).bind(hash).first<KeyRow>();
    } catch (err) {
      throw d1Error(err);
    }
    if (!row) return null;
    const record = keyRecordOf(row, ISO_TIME);
    await this.cache?.put(record, at);
    return record;
  }
}
