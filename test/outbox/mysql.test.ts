import { capabilityOf, KeyManager } from 'keygate';
import { MysqlKeyStore } from 'keygate/mysql';
import type { Outbox } from 'keygate/store-kit';
import { describeOutboxContract } from 'keygate/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mysqlAvailable, openTestDatabase, type TestDatabase } from '../stores/support/mysql.js';

const available = await mysqlAvailable();
const outboxOf = (store: MysqlKeyStore) => capabilityOf(store, 'outbox') as Outbox;
let db: TestDatabase;
let prefixes = 0;

beforeAll(async () => {
  if (available) db = await openTestDatabase('ob');
});
afterAll(async () => {
  await db?.drop();
});

describe.skipIf(!available)('MysqlKeyStore outbox over MariaDB', () => {
  describeOutboxContract(
    'MysqlKeyStore over two mysql2 pools',
    async () => {
      const tablePrefix = `o${++prefixes}_`;
      const store = new MysqlKeyStore({ client: db.pool({ connectionLimit: 5 }), tablePrefix });
      await store.migrate();
      return {
        outbox: outboxOf(store),
        peer: outboxOf(new MysqlKeyStore({ client: db.pool({ connectionLimit: 5 }), tablePrefix })),
      };
    },
    { describe, it, expect, beforeEach, afterEach },
  );

  it('a key write whose event cannot be stored is not written either: one transaction', async () => {
    const pool = db.pool();
    const store = new MysqlKeyStore({ client: pool, tablePrefix: 'tx_' });
    await store.migrate();
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'acct_tx', name: 'ci', mode: 'live' });
    await pool.query(
      `CREATE TRIGGER tx_outbox_refused BEFORE INSERT ON tx_outbox FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no more events'`,
    );
    await expect(keys.create({ accountId: 'acct_tx', name: 'lost', mode: 'live' })).rejects.toMatchObject({
      code: 'key_store_unavailable',
    });
    await expect(keys.revoke(key.id)).rejects.toMatchObject({ code: 'key_store_unavailable' });
    expect((await keys.list('acct_tx')).map((k) => [k.name, k.status])).toEqual([['ci', 'active']]);
    const [changes] = await pool.query('SELECT count(*) AS n FROM tx_changes');
    expect(Number((changes as { n: number }[])[0]?.n)).toBe(1); // only the first key's creation was announced
  });

  it('stores the events of a key write with their deliveries, which a dispatcher of another pool claims', async () => {
    const tablePrefix = 'ev_';
    const store = new MysqlKeyStore({ client: db.pool(), tablePrefix });
    await store.migrate();
    const outbox = outboxOf(store);
    await outbox.endpoints.create({ accountId: 'acct_ev', url: 'https://hooks.example/keygate' });
    const keys = new KeyManager({ store });
    const { key } = await keys.create({ accountId: 'acct_ev', name: 'ci', mode: 'live' });
    await keys.revoke(key.id);
    const other = outboxOf(new MysqlKeyStore({ client: db.pool(), tablePrefix }));
    const claimed = await other.claim({ nowMs: Date.now() + 1000, leaseMs: 30_000, limit: 10 });
    expect(claimed.map((c) => [c.event.type, c.event.data.keyId]).sort()).toEqual([
      ['key.created', key.id],
      ['key.revoked', key.id],
    ]);
  });
});
