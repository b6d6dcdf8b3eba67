import { capabilityOf, KeyManager } from 'keygate';
import { MysqlKeyStore } from 'keygate/mysql';
import type { AuditLog } from 'keygate/store-kit';
import { describeAuditLogContract } from 'keygate/testing';
import type mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mysqlAvailable, openTestDatabase, type TestDatabase } from '../stores/support/mysql.js';
import { RUN_ID } from '../stores/support/services.js';

const available = await mysqlAvailable();
let db: TestDatabase;
let one: mysql.Pool;
let two: mysql.Pool;
const logOf = (store: MysqlKeyStore) => capabilityOf(store, 'audit') as AuditLog;
const storeOn = (p: mysql.Pool) => new MysqlKeyStore({ client: p });

beforeAll(async () => {
  if (!available) return;
  db = await openTestDatabase('au');
  one = db.pool();
  two = db.pool();
  await storeOn(one).migrate();
});
afterAll(async () => {
  await db?.drop();
});

/** What the database answers to `statement`: its error, or undefined when it ran. */
async function refusal(statement: string, params: unknown[]): Promise<unknown> {
  try {
    await one.query(statement, params);
    return undefined;
  } catch (err) {
    return err;
  }
}

describe.skipIf(!available)('MysqlKeyStore audit log over MariaDB', () => {
  describeAuditLogContract(
    'MysqlKeyStore over a mysql2 pool',
    async () => ({ log: logOf(storeOn(one)), peer: logOf(storeOn(two)) }),
    { describe, it, expect, beforeEach, afterEach },
  );

  it('refuses UPDATE and DELETE of the audit table, whoever sends them, and keeps the entry', async () => {
    const log = logOf(storeOn(one));
    const entry = await log.append({
      at: new Date().toISOString(),
      accountId: `acct_my_${RUN_ID}`,
      action: 'key.updated',
      actor: { type: 'api' },
      changes: { name: { before: 'a', after: 'b' } },
    });
    expect(String(await refusal('UPDATE keygate_audit SET changes = NULL WHERE id = ?', [entry.id]))).toMatch(
      /keygate: the audit log is append-only; UPDATE on keygate_audit is refused/,
    );
    expect(String(await refusal('DELETE FROM keygate_audit WHERE id = ?', [entry.id]))).toMatch(
      /keygate: the audit log is append-only; DELETE on keygate_audit is refused/,
    );
    expect(await log.list({ accountId: entry.accountId })).toEqual([entry]);
  });

  it('pages an account and a key on their indexes', async () => {
    const [rows] = await one.query(
      `SELECT index_name AS name, GROUP_CONCAT(column_name ORDER BY seq_in_index) AS columns
        FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'keygate_audit'
        GROUP BY index_name ORDER BY index_name`,
    );
    // information_schema's collation sorts case-insensitively: PRIMARY after audit_*.
    expect(rows).toEqual([
      { name: 'audit_account', columns: 'account_id,id' },
      { name: 'audit_at', columns: 'at' },
      { name: 'audit_key', columns: 'key_id,id' },
      { name: 'PRIMARY', columns: 'id' },
    ]);
  });

  it('lets a hand-written DELETE through only for an entry older than the cutoff a prune recorded, which never moves back', async () => {
    // Tables of their own: the contract's prune moved the cutoff of the shared ones.
    const store = new MysqlKeyStore({ client: one, tablePrefix: 'cut_' });
    await store.migrate();
    const log = logOf(store);
    const account = `acct_cutoff_${RUN_ID}`;
    const entryAt = (at: string) =>
      log.append({ at, accountId: account, action: 'key.updated', actor: { type: 'api' } });
    const [before, after] = [await entryAt('2000-01-01T00:00:00.000Z'), await entryAt('2001-01-01T00:00:00.000Z')];
    const remove = async (id: string) =>
      ((await one.query('DELETE FROM cut_audit WHERE id = ?', [id]))[0] as { affectedRows: number }).affectedRows;
    const refused = /keygate: the audit log is append-only; DELETE on cut_audit is refused/;
    expect(String(await remove(before.id).catch((err: unknown) => err))).toMatch(refused);
    expect(await log.prune({ olderThanMs: Date.now() - Date.UTC(2000, 6, 1) })).toEqual({ deleted: 1 });
    expect(String(await remove(after.id).catch((err: unknown) => err))).toMatch(refused);
    // A prune of a longer retention leaves the cutoff where it was.
    expect(await log.prune({ olderThanMs: Date.now() - Date.UTC(1990, 0, 1) })).toEqual({ deleted: 0 });
    const late = await entryAt('2000-03-01T00:00:00.000Z');
    expect(await remove(late.id)).toBe(1);
    expect(await log.list({ accountId: account })).toEqual([after]);
  });

  it('shows what a manager in one process did to the managers of another', async () => {
    const account = `acct_two_processes_${RUN_ID}`;
    const here = new KeyManager({ store: storeOn(one) });
    const there = new KeyManager({ store: storeOn(two) });
    const { key } = await here.create(
      { accountId: account, name: 'ci', mode: 'test' },
      { actor: { type: 'cli', id: 'alice' } },
    );
    await there.revoke(key.id, { actor: { type: 'dashboard', id: account }, address: '203.0.113.7' });
    const entries = await there.audit({ accountId: account });
    expect(entries.map((e) => [e.action, e.actor.type])).toEqual([
      ['key.revoked', 'dashboard'],
      ['key.created', 'cli'],
    ]);
    expect(await here.audit({ accountId: account, keyId: key.id })).toEqual(entries);
  });
});
