import {
  checkOptionNames,
  type DailyTotal,
  type DashboardStore,
  type KeyActivity,
  type KeyPage,
  type KeyPageQuery,
} from 'keygate/store-kit';
import type { SqlEngine } from './engine.js';
import { KEY_COLUMNS, type KeyRow, keyRecordOf, marks } from './key-record.js';
import { holdsNul } from './nul.js';
import type { GivenOptions } from './options.js';
import { type SqlTx, type Step, wait } from './step.js';

/**
 * What the dashboard's store needs of an engine beyond its runner, codec and tables (the key store's
 * `keys`, `usage`, `key_activity`, and `used_tokens`): the expressions and statements that differ.
 *
 * @example
 * const dialect: DashboardDialect = { ...engine, contains: (col) => `instr(${col}, ?) > 0`, ... };
 */
export interface DashboardDialect<X extends SqlTx = SqlTx> extends SqlEngine<X> {
  /** A text parameter where the engine must be told its type (`?::text`), else `?`. */
  readonly text: string;
  /** True when `column` (lower-cased text) holds the ? needle as plain characters (no `%` or `_` pattern). */
  contains(column: string): string;
  /** The usage table's `day` as `YYYY-MM-DD` text. */
  readonly dayText: string;
  /**
   * Records a token as used until ? expires at, unless a record of it has not expired at ? now; true
   * when this call recorded it (an expired record may be taken again).
   */
  markToken(tx: X, tokenId: string, expiresAt: string, now: string): Step<boolean>;
  /** Creates or upgrades the key store's tables (the dashboard's among them) under the engine's migration lock. */
  migrate(): Promise<{ applied: number[] }>;
}

/**
 * The dashboard's store every SQL engine shares, beside that engine's key store: it reads the key
 * store's tables (keys, usage, last use) with one statement per call, on their indexes, and keeps
 * the single-use tokens in `keygate_used_tokens`, so a sign-in link works once across every process
 * sharing the database.
 *
 * @example
 * export class SqliteDashboardStore extends SqlDashboardStore { ... }
 */
export class SqlDashboardStore<X extends SqlTx = SqlTx> implements DashboardStore {
  /** `given`: the backend class's options, refused when a member is unknown (see `GivenOptions`). */
  constructor(
    private readonly dialect: DashboardDialect<X>,
    given?: GivenOptions,
  ) {
    if (given) checkOptionNames(given.options, given.names, given.where);
  }

  /**
   * Creates or upgrades the tables, the key store's included (the dashboard reads them): the same
   * versioned migrations as the key store's `migrate`, so calling both, in any order, is safe.
   * Idempotent; concurrent callers are serialised by the engine's migration lock.
   *
   * @example
   * await store.migrate(); // at start-up; a second call does nothing
   */
  migrate(): Promise<{ applied: number[] }> {
    return this.dialect.migrate();
  }

  async listKeysPage(accountId: string, page: KeyPageQuery): Promise<KeyPage> {
    // No key's name, hint or id holds a NUL (and PostgreSQL would refuse the parameter): nothing matches.
    if (holdsNul(accountId) || holdsNul(page.search ?? '')) return { records: [], total: 0 };
    const d = this.dialect;
    const needle = page.search ? page.search.toLowerCase() : null;
    const status = page.status ?? null;
    const mode = page.mode ?? null;
    const sql = `SELECT ${KEY_COLUMNS}, count(*) OVER () AS total FROM ${d.table('keys')}
      WHERE account_id = ?
        AND (${d.text} IS NULL OR ${d.contains('lower(name)')} OR ${d.contains('lower(hint)')} OR ${d.contains('lower(id)')})
        AND (${d.text} IS NULL OR status = ?) AND (${d.text} IS NULL OR mode = ?)
      ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`;
    const params = [accountId, needle, needle, needle, needle, status, status, mode, mode, page.limit, page.offset];
    const rows = await d.runner.read(function* (tx) {
      return yield* wait(tx.all<KeyRow & { total: string | number }>(sql, params));
    });
    if (rows.length === 0 && page.offset > 0) {
      // Past the end: the window count needs a row; ask for the first page to learn the total.
      const first = await this.listKeysPage(accountId, { ...page, offset: 0, limit: 1 });
      return { records: [], total: first.total };
    }
    return { records: rows.map((row) => keyRecordOf(row, d.time)), total: Number(rows[0]?.total ?? 0) };
  }

  async getDailyTotalsOfKeys(keyIds: readonly string[], from: string, to: string): Promise<DailyTotal[]> {
    keyIds = keyIds.filter((id) => !holdsNul(id));
    if (keyIds.length === 0) return [];
    const d = this.dialect;
    const sql = `SELECT key_id, ${d.dayText} AS day, sum(count) AS total FROM ${d.table('usage')}
      WHERE key_id IN (${marks(keyIds.length)}) AND day BETWEEN ? AND ? GROUP BY key_id, day ORDER BY key_id, day`;
    return d.runner.read(function* (tx) {
      type Row = { key_id: string; day: string; total: string | number };
      const rows = yield* wait(tx.all<Row>(sql, [...keyIds, from, to]));
      return rows.map((r) => ({ keyId: r.key_id, day: r.day, total: Number(r.total) }));
    });
  }

  async getActivityOfKeys(keyIds: readonly string[]): Promise<KeyActivity[]> {
    keyIds = keyIds.filter((id) => !holdsNul(id));
    if (keyIds.length === 0) return [];
    const d = this.dialect;
    const sql = `SELECT key_id, last_used_at, last_used_ip FROM ${d.table('key_activity')} WHERE key_id IN (${marks(keyIds.length)})`;
    return d.runner.read(function* (tx) {
      type Row = { key_id: string; last_used_at: Date | string; last_used_ip: string | null };
      const rows = yield* wait(tx.all<Row>(sql, keyIds));
      return rows.map((r) => ({
        keyId: r.key_id,
        lastUsedAt: d.time.read(r.last_used_at),
        lastUsedIp: r.last_used_ip,
      }));
    });
  }

  async markTokenUsed(tokenId: string, expiresAt: string): Promise<boolean> {
    const d = this.dialect;
    const now = d.time.write(new Date().toISOString());
    const until = d.time.write(expiresAt);
    return d.runner.transaction(function* (tx) {
      // Now and then, drop records whose token no longer verifies anyway.
      if (Math.random() < 1 / 64) yield tx.run(`DELETE FROM ${d.table('used_tokens')} WHERE expires_at < ?`, [now]);
      return yield* d.markToken(tx, tokenId, until, now);
    });
  }

  async isTokenUsed(tokenId: string): Promise<boolean> {
    const d = this.dialect;
    const now = d.time.write(new Date().toISOString());
    return d.runner.read(function* (tx) {
      const sql = `SELECT 1 AS used FROM ${d.table('used_tokens')} WHERE token_id = ? AND expires_at > ?`;
      return (yield* wait(tx.all(sql, [tokenId, now]))).length > 0;
    });
  }
}

/**
 * The token upsert of engines with `ON CONFLICT ... RETURNING` (PostgreSQL, SQLite, D1): one statement
 * that answers a row only when this call recorded the token.
 *
 * @example
 * markToken: (tx, id, until, now) => upsertToken(tx, engine.table('used_tokens'), id, until, now),
 */
export function* upsertToken(tx: SqlTx, table: string, tokenId: string, until: string, now: string): Step<boolean> {
  const sql = `INSERT INTO ${table} AS t (token_id, expires_at) VALUES (?, ?)
    ON CONFLICT (token_id) DO UPDATE SET expires_at = excluded.expires_at WHERE t.expires_at <= ?
    RETURNING token_id`;
  return (yield* wait(tx.all(sql, [tokenId, until, now]))).length === 1;
}
