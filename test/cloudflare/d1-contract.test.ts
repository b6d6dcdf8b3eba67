// D1KeyStore, D1AuditLog and D1DashboardStore proven by the contract suites of keygate/testing,
// against real D1 databases in Miniflare (workerd's own D1, in memory), one fresh database per test.
import { D1AuditLog, D1DashboardStore, D1KeyStore } from 'keygate/cloudflare';
import { describeAuditLogContract, describeDashboardStoreContract, describeKeyStoreContract } from 'keygate/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MiniflarePool } from './support/miniflare.js';

const pool = new MiniflarePool(120);
afterAll(() => pool.dispose());
const t = { describe, it, expect, beforeEach, afterEach };

// The outage: the key table is renamed away (every statement on it fails in D1) and back.
async function migratedStore(withCache: boolean) {
  const { db, kv } = await pool.take();
  const store = new D1KeyStore({ db, ...(withCache && { cache: kv }) });
  await store.migrate();
  return {
    store,
    breakStore: async () => {
      await db.prepare('ALTER TABLE keygate_keys RENAME TO keygate_keys_away').run();
    },
    restoreStore: async () => {
      const away = await db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'keygate_keys_away'`).first();
      if (away) await db.prepare('ALTER TABLE keygate_keys_away RENAME TO keygate_keys').run();
    },
    unmigrated: async (count: number) => {
      const fresh = await pool.take();
      return { stores: Array.from({ length: count }, () => new D1KeyStore({ db: fresh.db })) };
    },
  };
}

describeKeyStoreContract('D1KeyStore (Miniflare D1)', () => migratedStore(false), t, {
  outage: true,
  auditedWrites: true,
  hooks: ['unmigrated'],
});
describeKeyStoreContract('D1KeyStore with a KV cache (Miniflare D1 and KV)', () => migratedStore(true), t, {
  outage: true,
  auditedWrites: true,
});

describeAuditLogContract(
  'D1AuditLog (Miniflare D1)',
  async () => {
    const { db } = await pool.take();
    const log = new D1AuditLog({ db });
    await log.migrate();
    return { log, peer: new D1AuditLog({ db }) };
  },
  t,
);

describeDashboardStoreContract(
  'D1DashboardStore (Miniflare D1)',
  async () => {
    const { db } = await pool.take();
    const store = new D1DashboardStore({ db });
    await store.migrate();
    return { keys: new D1KeyStore({ db }), store, peer: new D1DashboardStore({ db }) };
  },
  t,
);
