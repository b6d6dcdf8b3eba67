// Keys written before suspension existed read as not suspended (null time and reason) in every
// store, and can be suspended once upgraded; PostgreSQL migration 5 keeps revocation final.
import { PGlite } from '@electric-sql/pglite';
import { KeyManager } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, RUN_ID, serviceAvailable } from './support/services.js';

const redisAvailable = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const PREFIX = `keygate:test:${RUN_ID}:suspension:`;
const closers: (() => Promise<unknown>)[] = [];

let db: PGlite;
beforeAll(async () => {
  db = await PGlite.create();
  closers.push(() => db.close());
});

afterAll(async () => {
  for (const close of closers) await close();
});

describe('a key stored before suspension existed', () => {
  it('reads as not suspended after PostgreSQL migration 6, can be suspended, and a revoked row stays final', async () => {
    const store = new PostgresKeyStore({ client: db });
    await store.migrate();
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'a', name: 'old', mode: 'live' });
    const gone = await keys.create({ accountId: 'a', name: 'gone', mode: 'live' });
    await keys.revoke(gone.key.id);
    // Back to schema version 5, as a database of the previous release holds it.
    await db.query('ALTER TABLE keygate_keys DROP COLUMN suspended_at, DROP COLUMN suspended_reason');
    await db.query('ALTER TABLE keygate_keys DROP CONSTRAINT keygate_keys_status_check');
    await db.query(
      `ALTER TABLE keygate_keys ADD CONSTRAINT keygate_keys_status_check CHECK (status IN ('active', 'revoked'))`,
    );
    await db.query('DROP TABLE keygate_outbox, keygate_webhook_endpoints, keygate_webhook_deliveries');
    // And the audit log as version 5 made it: UPDATE and DELETE refused alike, no retention.
    await db.query('DROP TRIGGER keygate_audit_no_update ON keygate_audit');
    await db.query('DROP TRIGGER keygate_audit_no_delete ON keygate_audit');
    await db.query(`CREATE TRIGGER keygate_audit_no_update_or_delete BEFORE UPDATE OR DELETE ON keygate_audit
      FOR EACH ROW EXECUTE FUNCTION keygate_audit_is_append_only()`);
    await db.query('DROP FUNCTION keygate_audit_deletes_past_retention()');
    await db.query('DROP TABLE keygate_audit_retention');
    await db.query('DROP INDEX keygate_audit_at, keygate_usage_day');
    await db.query('DELETE FROM keygate_migrations WHERE version >= 6');
    await expect(db.query(`UPDATE keygate_keys SET status = 'suspended' WHERE id = $1`, [key.id])).rejects.toThrow();

    expect(await new PostgresKeyStore({ client: db }).migrate()).toEqual({ applied: [6, 7, 8] });
    expect(await keys.get(key.id)).toMatchObject({ status: 'active', suspendedAt: null, suspendedReason: null });
    expect(await keys.suspend(key.id, { reason: 'after the upgrade' })).toMatchObject({ status: 'suspended' });
    expect(await keys.get(key.id)).toMatchObject({ status: 'suspended', suspendedReason: 'after the upgrade' });
    // The status check admits the three states and nothing else; the trigger still guards revoked rows.
    await expect(db.query(`UPDATE keygate_keys SET status = 'paused' WHERE id = $1`, [key.id])).rejects.toThrow();
    await expect(db.query(`UPDATE keygate_keys SET status = 'active' WHERE id = $1`, [gone.key.id])).rejects.toThrow(
      /revoked/,
    );
  });

  it.skipIf(!redisAvailable)('reads as not suspended from a Redis record without the fields', async () => {
    const client = await createClient({ url: REDIS_URL }).connect();
    closers.push(async () => {
      for await (const k of client.scanIterator({ MATCH: `${PREFIX}*` })) if (k.length) await client.del(k);
      client.destroy();
    });
    const store = new RedisKeyStore({ client, prefix: PREFIX });
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'a', name: 'old', mode: 'live' });
    const {
      suspendedAt: _a,
      suspendedReason: _r,
      ...legacy
    } = JSON.parse((await client.get(`${PREFIX}key:${key.id}`)) as string);
    await client.set(`${PREFIX}key:${key.id}`, JSON.stringify(legacy));
    expect(await store.findById(key.id)).toMatchObject({ suspendedAt: null, suspendedReason: null });
    expect(await keys.suspend(key.id)).toMatchObject({ status: 'suspended', suspendedReason: null });
  });
});
