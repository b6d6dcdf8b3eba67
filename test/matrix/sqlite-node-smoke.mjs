// A smoke run of keygate/sqlite over node:sqlite (Node 22.5+), from the built package: one file, two
// connections (as two processes would hold them). Not part of `npm test` (Node 20 has no node:sqlite):
//   npm run build && test/matrix/runtimes/node_modules/node22/bin/node test/matrix/sqlite-node-smoke.mjs
// Prints one line per check and exits 1 on the first that fails.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { authenticate, CachedKeyStore, KeyManager } from 'keygate';
import { SqliteCreditLedger, SqliteKeyStore, SqliteRateLimiter } from 'keygate/sqlite';

const folder = mkdtempSync(join(tmpdir(), 'keygate-node-sqlite-'));
const path = join(folder, 'keygate.db');
const [one, two] = [new DatabaseSync(path), new DatabaseSync(path)];
const check = (name, ok) => {
  console.log(`${ok ? 'ok' : 'FAILED'} ${name}`);
  if (!ok) process.exitCode = 1;
};
try {
  const store = new SqliteKeyStore({ database: one, pollIntervalMs: 50 });
  check('migrates', (await store.migrate()).applied.join() === '1');
  const peer = new SqliteKeyStore({ database: two });
  const keys = new KeyManager({ store: peer });
  const { secret, key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
  const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
  const auth = () => authenticate({ headers: { 'x-api-key': secret } }, cached);
  check('authenticates', (await auth()).ok === true);
  await keys.revoke(key.id);
  let result = await auth();
  for (let i = 0; result.ok && i < 40; i++) {
    await new Promise((r) => setTimeout(r, 25));
    result = await auth();
  }
  check('a revocation on the other connection reaches the cache', result.code === 'revoked_api_key');
  check('the audit log holds both actions', (await keys.audit({ accountId: 'acct_1' })).length === 2);
  cached.close();
  store.close();

  const limiter = new SqliteRateLimiter({ database: one });
  await limiter.migrate();
  const decisions = [];
  for (let i = 0; i < 5; i++)
    decisions.push(
      await new SqliteRateLimiter({ database: i % 2 ? one : two }).consume('key_1', { limit: 3, windowMs: 60_000 }, 1),
    );
  check('limits count across connections', decisions.filter((d) => d.allowed).length === 3);

  const ledger = new SqliteCreditLedger({ database: one });
  await ledger.migrate();
  await ledger.topUp('acct_1', 5, { reference: 'pay_1' });
  const held = await new SqliteCreditLedger({ database: two }).hold('acct_1', 4);
  check('holds on the other connection', held.ok && held.balance === 1);
  check('settles', (await ledger.settle(held.holdId, 3)).charged === 3);
  const books = await ledger.reconcile('acct_1');
  check('reconciles', books.ok && books.balance === 2 && books.entries === 2);
} finally {
  one.close();
  two.close();
  rmSync(folder, { recursive: true, force: true });
}
