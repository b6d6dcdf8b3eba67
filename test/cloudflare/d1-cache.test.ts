// The KV cache of D1KeyStore and its staleness bound, against real D1 and KV in Miniflare, with a
// clock the test moves: a record read from D1 at t is served from KV before t + maxStaleMs and never
// from then on, whatever KV still holds; a failing D1 past the bound is a 503, never a stale allow.
import { authenticate, type CreatedKey, KeyManager } from 'keygate';
import { D1KeyStore, type D1Like, KV_PREFIX, type KVLike, migrationSql } from 'keygate/cloudflare';
import { Miniflare } from 'miniflare';
import { afterAll, describe, expect, it } from 'vitest';
import { MiniflarePool } from './support/miniflare.js';

const pool = new MiniflarePool(20);
afterAll(() => pool.dispose());

const MAX_STALE_MS = 30_000;
const auth = (store: D1KeyStore, secret: string) =>
  authenticate({ headers: { 'x-api-key': secret }, ip: '203.0.113.7' }, store, { timeoutMs: 5_000 });

/** A cached store on its clock, and a second writer on the same database that never touches KV. */
async function setUp(): Promise<{
  db: D1Like;
  kv: KVLike;
  store: D1KeyStore;
  other: KeyManager;
  clock: { now: number };
  created: CreatedKey;
}> {
  const { db, kv } = await pool.take();
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
  const store = new D1KeyStore({ db, cache: kv, maxStaleMs: MAX_STALE_MS, clock: () => clock.now });
  await store.migrate();
  const created = await new KeyManager({ store }).create({ accountId: 'acct_cf', name: 'edge', mode: 'live' });
  return { db, kv, store, other: new KeyManager({ store: new D1KeyStore({ db }) }), clock, created };
}

const breakD1 = (db: D1Like) => db.prepare('ALTER TABLE keygate_keys RENAME TO keygate_keys_away').run();

describe('D1KeyStore with a KV cache', () => {
  it('serves a key revoked by another writer from KV until maxStaleMs after it was read, and refuses it from then on', async () => {
    const { store, other, clock, created } = await setUp();
    const readAt = clock.now;
    expect(await auth(store, created.secret)).toMatchObject({ ok: true }); // read from D1, stored in KV
    await other.revoke(created.key.id); // bypasses this instance's KV delete
    clock.now = readAt + MAX_STALE_MS - 1;
    expect(await auth(store, created.secret)).toMatchObject({ ok: true }); // the KV copy, within the bound
    clock.now = readAt + MAX_STALE_MS;
    expect(await auth(store, created.secret)).toMatchObject({ status: 401, code: 'revoked_api_key' });
    // Never again: D1's answer (revoked) is what KV holds now, at every later time.
    for (const later of [1, MAX_STALE_MS - 1, MAX_STALE_MS, 10 * MAX_STALE_MS]) {
      clock.now = readAt + MAX_STALE_MS + later;
      expect(await auth(store, created.secret)).toMatchObject({ code: 'revoked_api_key' });
    }
  });

  it('refuses a key revoked while a lookup was between its D1 read and its KV put: the late put never outlives the revocation', async () => {
    const { db, kv, store: writer, clock, created } = await setUp();
    // A second store on the same D1 and KV whose lookups by digest pause after D1 answered, until let go.
    let release: () => void = () => {};
    const paused = new Promise<void>((resolve) => {
      release = resolve;
    });
    let readDone: () => void = () => {};
    const read = new Promise<void>((resolve) => {
      readDone = resolve;
    });
    const gated: D1Like = {
      ...db,
      prepare: (query) => {
        const statement = db.prepare(query);
        if (!query.includes('WHERE hash = ?')) return statement;
        return {
          ...statement,
          bind: (...values) => {
            const bound = statement.bind(...values);
            return {
              ...bound,
              first: async <T>() => {
                const row = await bound.first<T>();
                readDone();
                await paused;
                return row;
              },
            };
          },
        };
      },
      batch: (statements) => db.batch(statements),
    };
    const reader = new D1KeyStore({ db: gated, cache: kv, maxStaleMs: MAX_STALE_MS, clock: () => clock.now });
    const lookup = auth(reader, created.secret); // reads D1 (active), then waits before its KV put
    await read;
    await new KeyManager({ store: writer }).revoke(created.key.id); // D1 write, then its KV entry
    release();
    expect(await lookup).toMatchObject({ ok: true }); // it read D1 before the revocation
    clock.now += 1;
    expect(await auth(writer, created.secret)).toMatchObject({ status: 401, code: 'revoked_api_key' });
    expect(await auth(new D1KeyStore({ db, cache: kv, clock: () => clock.now }), created.secret)).toMatchObject({
      status: 401,
      code: 'revoked_api_key',
    });
  });

  it('refuses a key at once after a revocation through the same store: the write deletes its KV entry', async () => {
    const { store, clock, created } = await setUp();
    expect(await auth(store, created.secret)).toMatchObject({ ok: true });
    await new KeyManager({ store }).revoke(created.key.id);
    clock.now += 1;
    expect(await auth(store, created.secret)).toMatchObject({ code: 'revoked_api_key' });
  });

  it('answers from KV while D1 is away and within the bound, then 503 (key_store_unavailable), never the stale entry', async () => {
    const { db, store, clock, created } = await setUp();
    const readAt = clock.now;
    expect(await auth(store, created.secret)).toMatchObject({ ok: true });
    await breakD1(db);
    clock.now = readAt + MAX_STALE_MS - 1;
    expect(await auth(store, created.secret)).toMatchObject({ ok: true });
    for (const past of [0, 1, 60_000, 3_600_000]) {
      clock.now = readAt + MAX_STALE_MS + past;
      expect(await auth(store, created.secret)).toMatchObject({ status: 503, code: 'key_store_unavailable' });
    }
    // The KV entry is still there (its own expiry is at least 60 s): the stored time refused it.
    await db.prepare('ALTER TABLE keygate_keys_away RENAME TO keygate_keys').run();
    expect(await auth(store, created.secret)).toMatchObject({ ok: true });
  });

  it('stores the record under its digest with the time it was read, and an expiry KV accepts (60 s at least)', async () => {
    const { kv, store, clock, created } = await setUp();
    const record = await store.findById(created.key.id);
    const readAt = clock.now;
    await store.findByHash(record!.hash);
    const entry = JSON.parse((await kv.get(KV_PREFIX + record!.hash))!);
    expect(entry).toEqual({ at: readAt, record: JSON.parse(JSON.stringify(record)) });
    expect(JSON.stringify(entry)).not.toContain(created.secret);
  });

  it('asks D1 for an entry stamped in the future, an unreadable entry, or one stored under another digest', async () => {
    const { db, kv, store, clock, created } = await setUp();
    const record = (await store.findById(created.key.id))!;
    await breakD1(db); // every answer below must come from D1, so each is a 503
    for (const raw of [
      JSON.stringify({ at: clock.now + 1, record }),
      '{not json',
      JSON.stringify({ at: 'yesterday', record }),
      JSON.stringify({ at: clock.now, record: { ...record, hash: 'f'.repeat(64) } }),
    ]) {
      await kv.put(KV_PREFIX + record.hash, raw);
      await expect(store.findByHash(record.hash)).rejects.toMatchObject({ code: 'key_store_unavailable' });
    }
    await kv.put(KV_PREFIX + record.hash, JSON.stringify({ at: clock.now, record }));
    expect(await store.findByHash(record.hash)).toEqual(record);
  });

  it('answers from D1 when KV itself fails (a cache is never the only answer)', async () => {
    const { db } = await pool.take();
    const broken = new Miniflare({ modules: true, script: 'export default {}', kvNamespaces: ['GONE'] });
    const gone = (await broken.getKVNamespace('GONE')) as unknown as KVLike;
    const store = new D1KeyStore({ db, cache: gone });
    await broken.dispose(); // every call on its binding now throws
    await store.migrate();
    const keys = new KeyManager({ store });
    const { secret, key } = await keys.create({ accountId: 'acct_cf', name: 'edge', mode: 'test' });
    expect(await auth(store, secret)).toMatchObject({ ok: true });
    await keys.revoke(key.id);
    expect(await auth(store, secret)).toMatchObject({ code: 'revoked_api_key' });
  });

  it('refuses a maxStaleMs that is not a positive number, a db that is not a D1 binding and a cache that is not KV, naming the field', async () => {
    const { db, kv } = await pool.take();
    for (const maxStaleMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '30000', null]) {
      expect(() => new D1KeyStore({ db, cache: kv, maxStaleMs: maxStaleMs as number })).toThrow(
        expect.objectContaining({ code: 'invalid_input', field: 'maxStaleMs' }),
      );
    }
    expect(new D1KeyStore({ db }).maxStaleMs).toBe(30_000);
    expect(() => new D1KeyStore({ db: {} as D1Like })).toThrow(expect.objectContaining({ field: 'db' }));
    expect(() => new D1KeyStore({ db, cache: {} as KVLike })).toThrow(expect.objectContaining({ field: 'cache' }));
  });
});

describe('D1KeyStore', () => {
  it('refuses a hand-written UPDATE of a revoked key in D1 itself (the trigger of the shared schema)', async () => {
    const { db } = await pool.take();
    const store = new D1KeyStore({ db });
    await store.migrate();
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'acct_cf', name: 'edge', mode: 'test' });
    await keys.revoke(key.id);
    await expect(
      db.prepare(`UPDATE keygate_keys SET status = 'active' WHERE id = ?`).bind(key.id).run(),
    ).rejects.toThrow(/the key is revoked and can no longer be changed/);
    expect(await store.findById(key.id)).toMatchObject({ status: 'revoked' });
  });
});

describe('migrationSql', () => {
  it('creates the schema when the D1 exec call runs it as one script, after which migrate() has nothing to apply', async () => {
    const { db } = await pool.take();
    await (db as unknown as { exec(sql: string): Promise<unknown> }).exec(migrationSql());
    const store = new D1KeyStore({ db });
    expect(await store.migrate()).toEqual({ applied: [] });
    const keys = new KeyManager({ store });
    const { secret, key } = await keys.create({ accountId: 'acct_cf', name: 'seeded', mode: 'live' });
    expect(await auth(store, secret)).toMatchObject({ ok: true });
    await keys.revoke(key.id);
    await expect(
      db.prepare(`UPDATE keygate_keys SET status = 'active' WHERE id = ?`).bind(key.id).run(),
    ).rejects.toThrow(/the key is revoked/);
  });
});
