import {
  type AuditEntry,
  type AuditEntryInput,
  type AuditLog,
  type AuditQuery,
  auditId,
  checkOptionNames,
  freezeAuditEntry,
  type PruneArgs,
  type PruneResult,
  pruneCutoffMs,
  validAuditEntry,
  validAuditQuery,
  validPruneArgs,
} from 'keygate/store-kit';
import type { SqlEngine } from './engine.js';
import { jsonOf, type TimeCodec } from './key-record.js';
import type { GivenOptions } from './options.js';
import { batchDelete, deleteInBatches } from './prune.js';
import { type SqlTx, type Step, wait } from './step.js';

const COLUMNS = 'id, at, account_id, key_id, action, actor_type, actor_id, changes, address';

/**
 * Inserts entries already made (ids given, checked by `validAuditEntry`) inside the caller's
 * transaction, one INSERT each: how the key store of the SQL core writes a key write's entries
 * (`WriteOptions.audit`) in the write's transaction, and how `SqlAuditLog` appends.
 *
 * @example
 * if (entries.length > 0) yield* insertAuditEntries(tx, dialect, entries);
 */
export function* insertAuditEntries(
  tx: SqlTx,
  engine: Pick<SqlEngine, 'time' | 'table'>,
  entries: readonly AuditEntry[],
): Step<void> {
  const sql = auditInsertSql(engine.table('audit'));
  for (const entry of entries) yield tx.run(sql, auditRowParams(entry, engine.time));
}

/**
 * The INSERT of one entry into `table`, its values as {@link auditRowParams} gives them. With
 * `afterAChange`, the row goes in only when the statement before it changed a row (SQLite's
 * `changes()`): how a D1 batch keeps an entry out when its conditional key UPDATE wrote nothing.
 *
 * @example
 * db.prepare(auditInsertSql('keygate_audit', true)).bind(...auditRowParams(entry, ISO_TIME));
 */
export function auditInsertSql(table: string, afterAChange = false): string {
  return afterAChange
    ? `INSERT INTO ${table} (${COLUMNS}) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE changes() = 1`
    : `INSERT INTO ${table} (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
}

/**
 * The values of an entry's row, in the order of the audit table's columns (`id, at, account_id,
 * key_id, action, actor_type, actor_id, changes, address`): for an INSERT, or a D1 batch's.
 *
 * @example
 * db.prepare(AUDIT_INSERT).bind(...auditRowParams(entry, ISO_TIME));
 */
export function auditRowParams(entry: AuditEntry, time: TimeCodec): unknown[] {
  return [
    entry.id,
    time.write(entry.at),
    entry.accountId,
    entry.keyId ?? null,
    entry.action,
    entry.actor.type,
    entry.actor.id ?? null,
    entry.changes === undefined ? null : JSON.stringify(entry.changes),
    entry.address ?? null,
  ];
}

interface AuditRow {
  id: string;
  at: Date | string;
  account_id: string;
  key_id: string | null;
  action: AuditEntry['action'];
  actor_type: AuditEntry['actor']['type'];
  actor_id: string | null;
  changes: unknown;
  address: string | null;
}

/**
 * What the audit log needs of an engine: nothing beyond the engine itself. Its table, `audit`, is
 * append-only in the database: triggers refuse UPDATE, and DELETE of an entry whose `at` is not
 * before the cutoff that `prune` last recorded in `audit_retention` (one row, only ever moved later).
 *
 * @example
 * const log = new SqlAuditLog(engine);
 */
export type AuditDialect = SqlEngine;

/**
 * The audit log every SQL engine shares: each append is one INSERT; listings page on the indexes
 * `(account_id, id)` and `(key_id, id)`, newest first (ids sort by time, compared byte by byte).
 * Every process on the database reads the same entries. `prune` records its cutoff, then deletes
 * on the index `(at)` in batches of 1,000 entries, each its own transaction.
 *
 * @example
 * const log = new SqlAuditLog(engine);
 * await log.list({ accountId: 'acct_1', limit: 20 });
 */
export class SqlAuditLog implements AuditLog {
  /** `given`: the backend class's options, refused when a member is unknown (see `GivenOptions`). */
  constructor(
    private readonly dialect: AuditDialect,
    given?: GivenOptions,
  ) {
    if (given) checkOptionNames(given.options, given.names, given.where);
  }

  async append(input: AuditEntryInput): Promise<AuditEntry> {
    const entry = freezeAuditEntry(auditId(), validAuditEntry(input));
    const { dialect } = this;
    try {
      await dialect.runner.transaction((tx) => insertAuditEntries(tx, dialect, [entry]));
    } catch (err) {
      // An INSERT whose answer was lost may have landed (a driver that sends it again then meets its
      // own row as a duplicate id). The id is this append's own, so the row's presence settles it.
      if (await this.landed(entry.id)) return entry;
      throw err;
    }
    return entry;
  }

  // Whether the entry with this id is stored; false when the store cannot say either.
  private async landed(id: string): Promise<boolean> {
    const sql = `SELECT id FROM ${this.dialect.table('audit')} WHERE id = ?`;
    try {
      return await this.dialect.runner.read(function* (tx) {
        return (yield* wait(tx.all<{ id: string }>(sql, [id]))).length === 1;
      });
    } catch {
      return false;
    }
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const { accountId, keyId, limit, before } = validAuditQuery(query);
    const { time, runner } = this.dialect;
    const table = this.dialect.table('audit');
    const params: unknown[] = [accountId];
    let where = 'account_id = ?';
    if (keyId !== undefined) {
      params.push(keyId);
      where += ' AND key_id = ?';
    }
    if (before !== undefined) {
      params.push(before);
      where += ' AND id < ?';
    }
    params.push(limit);
    const sql = `SELECT ${COLUMNS} FROM ${table} WHERE ${where} ORDER BY id DESC LIMIT ?`;
    return runner.read(function* (tx) {
      return (yield* wait(tx.all<AuditRow>(sql, params))).map((row) => entryOf(row, time));
    });
  }

  async prune(args: PruneArgs): Promise<PruneResult> {
    const cutoffMs = pruneCutoffMs(validPruneArgs(args, 'AuditLog.prune').olderThanMs);
    const { time, runner } = this.dialect;
    const cutoff = time.write(new Date(cutoffMs).toISOString());
    const retention = this.dialect.table('audit_retention');
    // The database lets a DELETE through only for an entry older than the recorded cutoff.
    await runner.transaction(function* (tx) {
      yield tx.run(`UPDATE ${retention} SET cutoff = ? WHERE id = 1 AND cutoff < ?`, [cutoff, cutoff]);
    });
    const sql = batchDelete(this.dialect, this.dialect.table('audit'), 'id', 'at < ?', 'at');
    return { deleted: await deleteInBatches(runner, sql, [cutoff]) };
  }
}

function entryOf(row: AuditRow, time: TimeCodec): AuditEntry {
  const changes = jsonOf<AuditEntry['changes'] | null>(row.changes);
  return freezeAuditEntry(row.id, {
    at: time.read(row.at),
    accountId: row.account_id,
    ...(row.key_id !== null && { keyId: row.key_id }),
    action: row.action,
    actor: row.actor_id === null ? { type: row.actor_type } : { type: row.actor_type, id: row.actor_id },
    ...(changes !== null && changes !== undefined && { changes }),
    ...(row.address !== null && { address: row.address }),
  });
}
