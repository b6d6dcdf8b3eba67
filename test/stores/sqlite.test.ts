import { authenticate, KeyManager, KeyStoreUnavailableError } from 'keygate';
import { type NodeSqliteLike, SqliteKeyStore, sqliteDriver } from 'keygate/sqlite';
import { describeKeyStoreContract } from 'keygate/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reopenable, SqliteFiles } from './support/sqlite-files.js';
import { STORE_CALLS } from './support/store-calls.js';

const files = new SqliteFiles();
afterAll(() => files.removeAll());

async function migratedStore(path = files.path(), options: { busyTimeoutMs?: number } = {}) {
  const store = new SqliteKeyStore({ database: files.connect(path), ...options });
  await store.migrate();
  return { path, store };
}

// The store and its peer are two connections to one file, as two processes would hold it; the store's
// connection can be closed under it (every call fails) and opened again.
describeKeyStoreContract(
  'SqliteKeyStore over better-sqlite3 (a file, two connections)',
  async () => {
    const path = files.path();
    const conn = reopenable(files, path);
    const store = new SqliteKeyStore({ database: conn.driver, pollIntervalMs: 50 });
    await store.migrate();
    const peer = new SqliteKeyStore({ database: files.connect(path) });
    return {
      store,
      peer,
      breakStore: async () => conn.close(),
      restoreStore: async () => conn.reopen(),
      close: async () => store.close(),
      unmigrated: async (count) => {
        const fresh = files.path();
        return { stores: Array.from({ length: count }, () => new SqliteKeyStore({ database: files.connect(fresh) })) };
      },
    };
  },
  { describe, it, expect, beforeEach, afterEach },
  { channel: true, outage: true, auditedWrites: true, hooks: ['unmigrated'] },
);

describe('SqliteKeyStore', () => {
  it('puts the file in WAL mode when it migrates, and records each migration', async () => {
    const path = files.path();
    await new SqliteKeyStore({ database: files.connect(path) }).migrate();
    const db = files.connect(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT version FROM keygate_migrations ORDER BY version').all()).toEqual([
      { version: 1 },
      { version: 2 },
    ]);
  });

  it('finds a key by digest through the unique index', async () => {
    const { path, store } = await migratedStore();
    const { key } = await new KeyManager({ store }).create({ accountId: 'a', name: 'k', mode: 'test' });
    const record = await store.findById(key.id);
    const db = files.connect(path);
    const plan = db.prepare('EXPLAIN QUERY PLAN SELECT * FROM keygate_keys WHERE hash = ?').all('x') as {
      detail: string;
    }[];
    expect(plan.map((p) => p.detail).join()).toMatch(/USING INDEX keygate_keys_hash/);
    expect(await store.findByHash(record!.hash)).toEqual(record);
  });

  it('refuses a hand-written UPDATE of a revoked key in the file itself', async () => {
    const { path, store } = await migratedStore();
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'test' });
    await keys.revoke(key.id);
    const db = files.connect(path);
    expect(() => db.prepare(`UPDATE keygate_keys SET status = 'active' WHERE id = ?`).run(key.id)).toThrow(
      /keygate: the key is revoked and can no longer be changed/,
    );
    expect((await store.findById(key.id))?.status).toBe('revoked');
  });

  it.each(STORE_CALLS)(
    "turns a closed database into key_store_unavailable with SQLite's error as cause (%s)",
    async (_, call) => {
      const path = files.path();
      const conn = reopenable(files, path);
      const store = new SqliteKeyStore({ database: conn.driver });
      await store.migrate();
      conn.close();
      const err = await call(store).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KeyStoreUnavailableError);
      expect(err).toMatchObject({ code: 'key_store_unavailable', cause: expect.any(Error) });
    },
  );

  it('fails a write closed (key_store_unavailable, SQLITE_BUSY) when another connection holds the write lock past busyTimeoutMs, and writes once it is let go', async () => {
    const { path, store } = await migratedStore(undefined, { busyTimeoutMs: 50 });
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'test' });
    const holder = files.connect(path);
    holder.exec('BEGIN IMMEDIATE');
    const err = await keys.update(key.id, { name: 'renamed' }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'key_store_unavailable',
      cause: expect.objectContaining({ code: 'SQLITE_BUSY' }),
    });
    // Readers never wait for the writer in WAL mode: authentication goes on while the lock is held.
    expect((await store.findById(key.id))?.name).toBe('k');
    holder.exec('ROLLBACK');
    expect((await keys.update(key.id, { name: 'renamed' })).name).toBe('renamed');
  });

  it('answers 503 key_store_unavailable through authenticate when the database is closed under it', async () => {
    const path = files.path();
    const conn = reopenable(files, path);
    const store = new SqliteKeyStore({ database: conn.driver });
    await store.migrate();
    const { secret } = await new KeyManager({ store }).create({ accountId: 'a', name: 'k', mode: 'live' });
    conn.close();
    expect(await authenticate({ headers: { 'x-api-key': secret } }, store)).toMatchObject({
      status: 503,
      code: 'key_store_unavailable',
    });
  });

  it('prunes the change table on writes, keeping the newest row, and a poller that missed pruned rows resyncs', async () => {
    const path = files.path();
    const { store } = await migratedStore(path);
    const writer = new SqliteKeyStore({ database: files.connect(path), changeRetentionMs: 1_000 });
    const keys = new KeyManager({ store: writer });
    const seen: string[] = [];
    const off = store.subscribe((c) => seen.push(c.type));
    const { key } = await keys.create({ accountId: 'a', name: 'k', mode: 'test' });
    const db = files.connect(path);
    // Make every row old, then write until a prune runs (every 64th change).
    db.prepare('UPDATE keygate_changes SET at = 0').run();
    for (let i = 0; i < 70; i++) await keys.update(key.id, { name: `n${i}` });
    const rows = db.prepare('SELECT count(*) AS n FROM keygate_changes').get() as { n: number };
    expect(rows.n).toBeLessThan(71);
    expect(rows.n).toBeGreaterThan(0);
    // The store had not polled since it subscribed (the timer did not run): the rows it missed are gone.
    await new Promise((r) => setTimeout(r, 400));
    off();
    expect(seen.filter((t) => t === 'resync').length).toBeGreaterThanOrEqual(2);
  });

  it('takes a node:sqlite-shaped database (prepare and exec, no pragma) through the same driver seam', async () => {
    const path = files.path();
    const db = files.connect(path);
    // better-sqlite3 under the shape node:sqlite's DatabaseSync has: no pragma method, so the adapter takes it as node:sqlite.
    const shaped: NodeSqliteLike = { prepare: (sql) => db.prepare(sql) as never, exec: (sql) => void db.exec(sql) };
    const store = new SqliteKeyStore({ database: shaped });
    await store.migrate();
    const { secret, key } = await new KeyManager({ store }).create({ accountId: 'a', name: 'k', mode: 'live' });
    expect(await authenticate({ headers: { 'x-api-key': secret } }, store)).toMatchObject({ ok: true });
    expect(sqliteDriver(shaped)).toBe(sqliteDriver(shaped));
    expect((await store.listByAccount('a')).map((r) => r.id)).toEqual([key.id]);
  });

  it('refuses what is not a database, naming the field', () => {
    expect(() => new SqliteKeyStore({ database: {} as never })).toThrow(expect.objectContaining({ field: 'database' }));
    expect(() => new SqliteKeyStore({ database: files.connect(files.path()), pollIntervalMs: 5_000 })).toThrow(
      expect.objectContaining({ field: 'pollIntervalMs' }),
    );
  });
});
