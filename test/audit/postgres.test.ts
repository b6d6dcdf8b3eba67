import { PGlite } from '@electric-sql/pglite';
import { capabilityOf, KeyManager } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import type { AuditLog } from 'keygate/store-kit';
import { describeAuditLogContract } from 'keygate/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PG_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const available = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const SCHEMA = `keygate_au${RUN_ID}`;
const pools: pg.Pool[] = [];

function pool(): pg.Pool {
  const p = new pg.Pool({ connectionString: PG_URL, max: 10 });
  p.on('error', () => {});
  pools.push(p);
  return p;
}

const logOf = (store: PostgresKeyStore) => capabilityOf(store, 'audit') as AuditLog;

// PGlite takes about a second to start: one in-memory database for the file.
let pglite: Promise<PGlite> | undefined;
const embedded = () => {
  pglite ??= PGlite.create();
  return pglite;
};
beforeAll(async () => {
  await new PostgresKeyStore({ client: await embedded(), schema: 'audit' }).migrate();
});

afterAll(async () => {
  if (pglite) await (await pglite).close();
  if (!available) return;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
  await Promise.all(pools.filter((p) => !p.ended).map((p) => p.end()));
});

describeAuditLogContract(
  'PostgresKeyStore over PGlite',
  async () => {
    const db = await embedded();
    return {
      log: logOf(new PostgresKeyStore({ client: db, schema: 'audit' })),
      peer: logOf(new PostgresKeyStore({ client: db, schema: 'audit' })),
    };
  },
  { describe, it, expect, beforeEach, afterEach },
);

/** What the database answers to `statement`: its error, or undefined when it ran. */
async function refusal(run: (statement: string) => Promise<unknown>, statement: string): Promise<unknown> {
  try {
    await run(statement);
    return undefined;
  } catch (err) {
    return err;
  }
}

const APPEND_ONLY = /keygate: the audit log is append-only; (UPDATE|DELETE|TRUNCATE) on keygate_audit is refused/;

describe('PostgresKeyStore audit table over PGlite', () => {
  it('refuses UPDATE, DELETE and TRUNCATE of an entry with a clear error, and keeps the entry', async () => {
    const db = await embedded();
    const log = logOf(new PostgresKeyStore({ client: db, schema: 'audit' }));
    const entry = await log.append({
      at: new Date().toISOString(),
      accountId: `acct_pglite_${RUN_ID}`,
      action: 'key.revoked',
      actor: { type: 'cli', id: 'alice' },
    });
    const run = (statement: string) => db.query(statement, statement.includes('$1') ? [entry.id] : []);
    for (const statement of [
      `UPDATE audit.keygate_audit SET action = 'key.created' WHERE id = $1`,
      'DELETE FROM audit.keygate_audit WHERE id = $1',
      'TRUNCATE audit.keygate_audit',
    ]) {
      expect(String((await refusal(run, statement)) ?? 'ran')).toMatch(APPEND_ONLY);
    }
    expect(await log.list({ accountId: entry.accountId })).toEqual([entry]);
  });
});

describe('PostgresKeyStore audit retention over PGlite', () => {
  it('lets a hand-written DELETE through only for an entry older than the cutoff a prune recorded, which never moves back', async () => {
    const db = await embedded();
    await new PostgresKeyStore({ client: db, schema: 'audit_cutoff' }).migrate();
    const log = logOf(new PostgresKeyStore({ client: db, schema: 'audit_cutoff' }));
    const account = `acct_cutoff_${RUN_ID}`;
    const entryAt = (at: string) =>
      log.append({ at, accountId: account, action: 'key.updated', actor: { type: 'api' } });
    const [before, after] = [await entryAt('2000-01-01T00:00:00.000Z'), await entryAt('2001-01-01T00:00:00.000Z')];
    const remove = async (id: string) =>
      (await db.query('DELETE FROM audit_cutoff.keygate_audit WHERE id = $1', [id])).affectedRows;
    expect(String(await refusal(() => remove(before.id), ''))).toMatch(APPEND_ONLY);
    expect(await log.prune({ olderThanMs: Date.now() - Date.UTC(2000, 6, 1) })).toEqual({ deleted: 1 });
    expect(String(await refusal(() => remove(after.id), ''))).toMatch(APPEND_ONLY);
    expect(String(await refusal(() => db.query('TRUNCATE audit_cutoff.keygate_audit'), ''))).toMatch(APPEND_ONLY);
    // A prune of a longer retention leaves the cutoff where it was.
    expect(await log.prune({ olderThanMs: Date.now() - Date.UTC(1990, 0, 1) })).toEqual({ deleted: 0 });
    const late = await entryAt('2000-03-01T00:00:00.000Z');
    expect(await remove(late.id)).toBe(1);
    expect(await log.list({ accountId: account })).toEqual([after]);
  });
});

describe.skipIf(!available)('PostgresKeyStore audit log over pg', () => {
  let one: pg.Pool | undefined;
  let two: pg.Pool | undefined;
  beforeAll(async () => {
    one = pool();
    two = pool();
    await new PostgresKeyStore({ client: one, schema: SCHEMA }).migrate();
  });
  const storeOn = (p: pg.Pool | undefined) => new PostgresKeyStore({ client: p as pg.Pool, schema: SCHEMA });

  describeAuditLogContract(
    'PostgresKeyStore over a pg Pool',
    async () => ({ log: logOf(storeOn(one)), peer: logOf(storeOn(two)) }),
    { describe, it, expect, beforeEach, afterEach },
  );

  it('refuses UPDATE, DELETE and TRUNCATE of the audit table, whoever sends them', async () => {
    const log = logOf(storeOn(one));
    const entry = await log.append({
      at: new Date().toISOString(),
      accountId: `acct_pg_${RUN_ID}`,
      action: 'key.updated',
      actor: { type: 'api' },
      changes: { name: { before: 'a', after: 'b' } },
    });
    const run = (statement: string) => (one as pg.Pool).query(statement, statement.includes('$1') ? [entry.id] : []);
    const table = `"${SCHEMA}".keygate_audit`;
    for (const statement of [
      `UPDATE ${table} SET changes = NULL WHERE id = $1`,
      `DELETE FROM ${table} WHERE id = $1`,
      `TRUNCATE ${table}`,
    ]) {
      expect(String((await refusal(run, statement)) ?? 'ran')).toMatch(APPEND_ONLY);
    }
    expect(await log.list({ accountId: entry.accountId })).toEqual([entry]);
  });

  it('pages an account and a key on their indexes, ids compared byte by byte', async () => {
    const { rows } = await (one as pg.Pool).query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'keygate_audit' ORDER BY indexname`,
      [SCHEMA],
    );
    expect(rows.map((r) => r.indexname)).toEqual([
      'keygate_audit_account',
      'keygate_audit_at',
      'keygate_audit_key',
      'keygate_audit_pkey',
    ]);
    expect(rows[0]?.indexdef).toMatch(/\(account_id, id\)/);
    expect(rows[1]?.indexdef).toMatch(/\(at\)/);
    expect(rows[2]?.indexdef).toMatch(/\(key_id, id\)/);
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
