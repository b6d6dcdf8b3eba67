import { capabilityOf, KeyManager } from 'keygate';
import { SqliteKeyStore, SqliteOutbox } from 'keygate/sqlite';
import type { Outbox } from 'keygate/store-kit';
import { describeOutboxContract } from 'keygate/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reopenable, SqliteFiles } from '../stores/support/sqlite-files.js';

const files = new SqliteFiles();
afterAll(() => files.removeAll());

// A file per test, two connections to it, as two processes would hold it.
describeOutboxContract(
  'SqliteOutbox over better-sqlite3 (a file, two connections)',
  async () => {
    const path = files.path();
    const outbox = new SqliteOutbox({ database: files.connect(path) });
    await outbox.migrate();
    return { outbox, peer: new SqliteOutbox({ database: files.connect(path) }) };
  },
  { describe, it, expect, beforeEach, afterEach },
);

describe('a KeyManager over a SqliteKeyStore (its outbox)', () => {
  it('writes each key event to the outbox in the transaction of its write, and none for a write that is refused', async () => {
    const path = files.path();
    const store = new SqliteKeyStore({ database: files.connect(path) });
    await store.migrate();
    const outbox = capabilityOf(store, 'outbox') as Outbox;
    expect(outbox).toBeInstanceOf(SqliteOutbox);
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    await keys.revoke(key.id);
    await expect(keys.revoke(key.id)).rejects.toMatchObject({ code: 'key_revoked' });
    await expect(keys.update(key.id, { name: 'x' })).rejects.toMatchObject({ code: 'key_revoked' });
    // Another connection (another process) sees the same deliveries.
    const other = new SqliteOutbox({ database: files.connect(path) });
    expect((await other.deliveries({ accountId: 'acct_1' })).map((d) => d.eventType)).toEqual([
      'key.revoked',
      'key.created',
    ]);
  });

  it('loses the event with the write when the write fails: a key write that SQLite refuses stores no event', async () => {
    const path = files.path();
    const conn = reopenable(files, path);
    const store = new SqliteKeyStore({ database: conn.driver });
    await store.migrate();
    const outbox = capabilityOf(store, 'outbox') as Outbox;
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    // A hand-made row with the id the next event will not have, but a digest collision makes the insert fail.
    const record = await store.findById(key.id);
    await expect(
      store.insert(
        { ...record!, id: 'key_dup' },
        {
          events: [
            { id: 'evt_lost', type: 'key.created', accountId: 'acct_1', at: new Date().toISOString(), data: {} },
          ],
        },
      ),
    ).rejects.toMatchObject({ code: 'key_conflict' });
    const db = files.connect(path);
    expect(db.prepare('SELECT count(*) AS n FROM keygate_outbox WHERE id = ?').get('evt_lost')).toEqual({ n: 0 });
    expect((await outbox.deliveries({ accountId: 'acct_1' })).map((d) => d.eventType)).toEqual(['key.created']);
  });
});
