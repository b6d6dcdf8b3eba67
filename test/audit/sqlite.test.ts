import { capabilityOf, KeyManager } from 'keygate';
import { SqliteAuditLog, SqliteKeyStore } from 'keygate/sqlite';
import type { AuditLog } from 'keygate/store-kit';
import { describeAuditLogContract } from 'keygate/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteFiles } from '../stores/support/sqlite-files.js';

const files = new SqliteFiles();
afterAll(() => files.removeAll());

const APPEND_ONLY = /keygate: the audit log is append-only; (UPDATE|DELETE) on keygate_audit is refused/;

// Two connections to one file, as two processes would hold it.
describeAuditLogContract(
  'SqliteAuditLog over better-sqlite3 (a file, two connections)',
  async () => {
    const path = files.path();
    const log = new SqliteAuditLog({ database: files.connect(path) });
    await log.migrate();
    return { log, peer: new SqliteAuditLog({ database: files.connect(path) }) };
  },
  { describe, it, expect, beforeEach, afterEach },
);

describe('SqliteAuditLog', () => {
  it('refuses UPDATE and DELETE of an entry (also a DELETE of every row) with a clear error, and keeps the entry', async () => {
    const path = files.path();
    const log = new SqliteAuditLog({ database: files.connect(path) });
    await log.migrate();
    const entry = await log.append({
      at: new Date().toISOString(),
      accountId: 'acct_1',
      action: 'key.revoked',
      actor: { type: 'cli', id: 'alice' },
    });
    const db = files.connect(path);
    for (const statement of [
      `UPDATE keygate_audit SET action = 'key.created' WHERE id = ?`,
      'DELETE FROM keygate_audit WHERE id = ?',
    ]) {
      expect(() => db.prepare(statement).run(entry.id)).toThrow(APPEND_ONLY);
    }
    expect(() => db.prepare('DELETE FROM keygate_audit').run()).toThrow(APPEND_ONLY);
    expect(await log.list({ accountId: 'acct_1' })).toEqual([entry]);
  });

  it('lets a hand-written DELETE through only for an entry older than the cutoff a prune recorded, which never moves back', async () => {
    const path = files.path();
    const log = new SqliteAuditLog({ database: files.connect(path) });
    await log.migrate();
    const entryAt = (at: string) =>
      log.append({ at, accountId: 'acct_1', action: 'key.updated', actor: { type: 'api' } });
    const [before, after] = [await entryAt('2000-01-01T00:00:00.000Z'), await entryAt('2001-01-01T00:00:00.000Z')];
    const db = files.connect(path);
    const remove = (id: string) => db.prepare('DELETE FROM keygate_audit WHERE id = ?').run(id).changes;
    expect(() => remove(before.id)).toThrow(APPEND_ONLY);
    expect(await log.prune({ olderThanMs: Date.now() - Date.UTC(2000, 6, 1) })).toEqual({ deleted: 1 });
    expect(() => remove(after.id)).toThrow(APPEND_ONLY);
    // A prune of a longer retention leaves the cutoff where it was.
    expect(await log.prune({ olderThanMs: Date.now() - Date.UTC(1990, 0, 1) })).toEqual({ deleted: 0 });
    const late = await entryAt('2000-03-01T00:00:00.000Z');
    expect(remove(late.id)).toBe(1);
    expect(await log.list({ accountId: 'acct_1' })).toEqual([after]);
  });

  it("is the key store's audit capability: what a manager on one connection did, a manager on another reads", async () => {
    const path = files.path();
    const storeOn = () => new SqliteKeyStore({ database: files.connect(path) });
    const first = storeOn();
    await first.migrate();
    expect(capabilityOf(first, 'audit')).toBeInstanceOf(SqliteAuditLog);
    const here = new KeyManager({ store: first });
    const there = new KeyManager({ store: storeOn() });
    const { key } = await here.create(
      { accountId: 'acct_2', name: 'ci', mode: 'test' },
      { actor: { type: 'cli', id: 'alice' } },
    );
    await there.revoke(key.id, { actor: { type: 'dashboard', id: 'acct_2' }, address: '203.0.113.7' });
    const entries = await there.audit({ accountId: 'acct_2' });
    expect(entries.map((e) => [e.action, e.actor.type])).toEqual([
      ['key.revoked', 'dashboard'],
      ['key.created', 'cli'],
    ]);
    expect(await here.audit({ accountId: 'acct_2', keyId: key.id })).toEqual(entries);
    expect(await (capabilityOf(first, 'audit') as AuditLog).list({ accountId: 'acct_2', limit: 1 })).toEqual([
      entries[0],
    ]);
  });
});

// A database that loses the answer to the COMMIT of an audit append: with `after` the COMMIT ran
// (the entry is stored) and the caller hears an error anyway, as when a remote database's answer is
// lost and the statement meets its own row when sent again; with `before` it never ran.
function losingCommit(db: object, mode: 'after' | 'before'): object {
  let appending = false;
  const wrap = (statement: object, sql: string) =>
    new Proxy(statement, {
      get(s, member) {
        const inner = Reflect.get(s, member) as (...a: unknown[]) => unknown;
        if (member !== 'run') return typeof inner === 'function' ? inner.bind(s) : inner;
        return (...params: unknown[]) => {
          if (sql.startsWith('INSERT INTO keygate_audit')) appending = true;
          if (sql !== 'COMMIT' || !appending) return inner.apply(s, params);
          appending = false;
          if (mode === 'after') inner.apply(s, params);
          throw new Error('UNIQUE constraint failed: keygate_audit.id (the append, sent again)');
        };
      },
    });
  return new Proxy(db, {
    get(target, name) {
      const value = Reflect.get(target, name) as (...a: unknown[]) => unknown;
      if (name !== 'prepare') return typeof value === 'function' ? value.bind(target) : value;
      return (sql: string) => wrap(value.call(target, sql) as object, sql);
    },
  });
}

describe('an append whose answer was lost', () => {
  const entry = { at: new Date().toISOString(), accountId: 'acct_lost', action: 'key.created', actor: { type: 'cli' } };

  it('is taken as written when the row is stored: the entry is listed once', async () => {
    const path = files.path();
    await new SqliteAuditLog({ database: files.connect(path) }).migrate();
    const log = new SqliteAuditLog({ database: losingCommit(files.connect(path), 'after') as never });
    const appended = await log.append(entry as never);
    expect((await log.list({ accountId: 'acct_lost' })).map((e) => e.id)).toEqual([appended.id]);
  });

  it('still fails when nothing was stored, and lists nothing', async () => {
    const path = files.path();
    await new SqliteAuditLog({ database: files.connect(path) }).migrate();
    const log = new SqliteAuditLog({ database: losingCommit(files.connect(path), 'before') as never });
    await expect(log.append(entry as never)).rejects.toMatchObject({ code: 'key_store_unavailable' });
    expect(await log.list({ accountId: 'acct_lost' })).toEqual([]);
  });
});
