// Keys written before `rateLimit` existed read as "no limit of its own" (null) in every store, and
// take one once updated.
import { PGlite } from '@electric-sql/pglite';
import { KeyManager } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, RUN_ID, serviceAvailable } from './support/services.js';

const redisAvailable = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const PREFIX = `keygate:test:${RUN_ID}:field:`;
const closers: (() => Promise<unknown>)[] = [];

let db: PGlite;
// PGlite can take many seconds to start on a busy machine: a hook's time limit allows for it.
beforeAll(async () => {
  db = await PGlite.create();
  closers.push(() => db.close());
});

afterAll(async () => {
  for (const close of closers) await close();
});

describe('a key stored before rate limits existed', () => {
  it('reads as rateLimit null after PostgreSQL migration 3 adds the column, and takes one on update', async () => {
    const store = new PostgresKeyStore({ client: db });
    await store.migrate();
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'a', name: 'old', mode: 'live' });
    // Back to schema version 2, as a database of the previous release holds it.
    await db.query(
      'ALTER TABLE keygate_keys DROP COLUMN rate_limit, DROP COLUMN suspended_at, DROP COLUMN suspended_reason',
    );
    await db.query('DROP TABLE keygate_used_tokens');
    await db.query('DROP TABLE keygate_audit');
    await db.query('DROP FUNCTION keygate_audit_is_append_only(), keygate_audit_deletes_past_retention()');
    await db.query('DROP TABLE keygate_audit_retention');
    await db.query('DROP INDEX keygate_usage_day');
    await db.query('DROP TABLE keygate_outbox, keygate_webhook_endpoints, keygate_webhook_deliveries');
    await db.query('DELETE FROM keygate_migrations WHERE version >= 3');
    expect(await new PostgresKeyStore({ client: db }).migrate()).toEqual({ applied: [3, 4, 5, 6, 7, 8] });
    expect(await keys.get(key.id)).toMatchObject({ rateLimit: null, version: 1 });
    expect(await keys.update(key.id, { rateLimit: { limit: 10, windowMs: 1000 } })).toMatchObject({
      rateLimit: { limit: 10, windowMs: 1000 },
    });
  });

  it.skipIf(!redisAvailable)('reads as rateLimit null from a Redis record without the field', async () => {
    const client = await createClient({ url: REDIS_URL }).connect();
    closers.push(async () => {
      for await (const k of client.scanIterator({ MATCH: `${PREFIX}*` })) if (k.length) await client.del(k);
      client.destroy();
    });
    const store = new RedisKeyStore({ client, prefix: PREFIX });
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'a', name: 'old', mode: 'live' });
    const { rateLimit: _, ...legacy } = JSON.parse((await client.get(`${PREFIX}key:${key.id}`)) as string);
    await client.set(`${PREFIX}key:${key.id}`, JSON.stringify(legacy));
    expect(await store.findById(key.id)).toMatchObject({ rateLimit: null });
    expect(await keys.update(key.id, { rateLimit: { limit: 10, windowMs: 1000 } })).toMatchObject({
      rateLimit: { limit: 10, windowMs: 1000 },
    });
  });
});
