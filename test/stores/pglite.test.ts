import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { authenticate, InvalidInputError, KeyManager, KeyStoreUnavailableError } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { describeKeyStoreContract } from 'keygate/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STORE_CALLS } from './support/store-calls.js';

const folders: string[] = [];
const databases: PGlite[] = [];
let schemas = 0;

async function tempFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'keygate-pglite-'));
  folders.push(dir);
  return dir;
}

// PGlite takes about a second to start, so each variant shares one database and gives every test a fresh schema.
function shared(open: () => Promise<PGlite>): () => Promise<PGlite> {
  let db: Promise<PGlite> | undefined;
  return () => {
    db ??= open().then((d) => {
      databases.push(d);
      return d;
    });
    return db;
  };
}
const inMemory = shared(async () => new PGlite());
// A database that was migrated, then closed: every call fails inside PGlite.
const closed = shared(async () => {
  const db = new PGlite();
  await new PostgresKeyStore({ client: db }).migrate();
  await db.close();
  return db;
});
const inFolder = shared(async () => new PGlite(await tempFolder()));

afterAll(async () => {
  for (const db of databases) if (!db.closed) await db.close();
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
});

// A second store over the same PGlite plays the other instance: its NOTIFY reaches the first one's LISTEN.
describeKeyStoreContract(
  'PostgresKeyStore over PGlite (in memory)',
  async () => {
    const db = await inMemory();
    const schema = `contract_${++schemas}`;
    const store = new PostgresKeyStore({ client: db, schema });
    await store.migrate();
    const peer = new PostgresKeyStore({ client: db, schema });
    return { store, peer, close: async () => store.close() };
  },
  { describe, it, expect, beforeEach, afterEach },
  { channel: true, auditedWrites: true },
);

describeKeyStoreContract(
  'PostgresKeyStore over PGlite (in a folder)',
  async () => {
    const store = new PostgresKeyStore({ client: await inFolder(), schema: `contract_${++schemas}` });
    await store.migrate();
    return { store, close: async () => store.close() };
  },
  { describe, it, expect, beforeEach, afterEach },
  { auditedWrites: true },
);

describe('PostgresKeyStore over PGlite', () => {
  it('keeps keys in its folder across a restart; migrating again applies nothing', async () => {
    const dir = await tempFolder();
    const first = new PGlite(dir);
    const store = new PostgresKeyStore({ client: first });
    expect(await store.migrate()).toEqual({ applied: [1, 2, 3, 4, 5, 6, 7, 8] });
    const { secret, key } = await new KeyManager({ store }).create({ accountId: 'a', name: 'k', mode: 'live' });
    await first.close();

    const reopened = new PGlite(dir);
    const again = new PostgresKeyStore({ client: reopened });
    expect(await again.migrate()).toEqual({ applied: [] });
    expect(await authenticate({ headers: { 'x-api-key': secret } }, again)).toMatchObject({
      ok: true,
      key: { id: key.id },
    });
    const { rows } = await reopened.query('SELECT version FROM keygate_migrations');
    expect(rows).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((version) => ({ version })));
    await reopened.close();
  });

  it('migrating a schema that is already current only reads: no transaction, lock or DDL', async () => {
    const db = await inMemory();
    await new PostgresKeyStore({ client: db, schema: 'current' }).migrate();
    const statements: string[] = [];
    let transactions = 0;
    const watched = {
      query: (text: string, params?: unknown[]) => {
        statements.push(text);
        return db.query(text, params);
      },
      transaction: <T>(fn: Parameters<PGlite['transaction']>[0]) => {
        transactions++;
        return db.transaction(fn) as Promise<T>;
      },
      listen: db.listen.bind(db),
    };
    expect(await new PostgresKeyStore({ client: watched as never, schema: 'current' }).migrate()).toEqual({
      applied: [],
    });
    expect(transactions).toBe(0);
    expect(statements.length).toBeLessThanOrEqual(2);
    expect(statements.every((text) => /^\s*SELECT\b/i.test(text))).toBe(true);
  });

  it('refuses, in the database too, an UPDATE that would bring a revoked key back', async () => {
    const db = await inMemory();
    const store = new PostgresKeyStore({ client: db, schema: 'final_revocation' });
    await store.migrate();
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    await keys.revoke(key.id);
    await expect(
      db.query("UPDATE final_revocation.keygate_keys SET status = 'active' WHERE id = $1", [key.id]),
    ).rejects.toThrow(/revoked/);
    expect(await store.findById(key.id)).toMatchObject({ status: 'revoked' });
  });

  it.each([
    ['upper case', 'Keygate'],
    ['a quote', 'a"b'],
    ['SQL', 'x; DROP TABLE y'],
    ['empty', ''],
    ['too long', 'k'.repeat(41)],
  ])('refuses a schema name with %s', async (_, schema) => {
    const client = await inMemory();
    expect(() => new PostgresKeyStore({ client, schema })).toThrow(InvalidInputError);
  });

  it.each([
    ['a pg Client-like object without a pool', { query: async () => ({ rows: [] }), connect: async () => {} }],
    ['nothing', undefined],
  ])('refuses %s as client', (_, client) => {
    expect(() => new PostgresKeyStore({ client: client as never })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'client' }),
    );
  });

  it.each(STORE_CALLS)(
    "turns a failure of PGlite into key_store_unavailable with PGlite's error as cause (%s)",
    async (_, call) => {
      const store = new PostgresKeyStore({ client: await closed() });
      const err = await call(store).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KeyStoreUnavailableError);
      expect(err).toMatchObject({ code: 'key_store_unavailable', cause: expect.any(Error) });
    },
    60_000, // the first case starts (and closes) a PGlite of its own
  );
});
