// One process of the MariaDB cross-process tests, bundled by esbuild and run by plain `node`, with
// its own mysql2 pool on the test database. Roles:
//   watch:   holds a CachedKeyStore (TTL 60 s) over a MysqlKeyStore and authenticates the key every
//            millisecond; prints `channel` when the change table delivers an update, `refused` at the
//            first refusal.
//   revoke:  revokes the key; prints when the call started and when it returned.
//   consume: says `ready`, waits for `go`, fires `n` concurrent consumes of 1 unit; prints what was allowed.
//   hold:    says `ready`, waits for `go`, fires `n` concurrent holds of 1 credit and prints the hold
//            ids; then waits for `{ settle, release }`, closes those holds and prints what it charged.
//   bill:    imports the live key into its own MemoryKeyStore, says `ready`, waits for `go`, answers
//            `n` concurrent requests through `authenticate` with credits, settling each allowed one.
import { createInterface } from 'node:readline';
import { authenticate, CachedKeyStore, KeyManager, MemoryKeyStore } from 'keygate';
import { finishCredits } from 'keygate/adapter-kit';
import { MysqlCreditLedger, MysqlKeyStore, MysqlRateLimiter } from 'keygate/mysql';
import mysql from 'mysql2/promise';

interface Args {
  role: 'watch' | 'revoke' | 'consume' | 'hold' | 'bill';
  url: string;
  tablePrefix: string;
  secret?: string;
  id?: string;
  keyId?: string;
  accountId?: string;
  limit?: number;
  n?: number;
  ttlMs?: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const now = () => performance.timeOrigin + performance.now();
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const nextLine = async () => String((await lines.next()).value ?? '');
const n = args.n ?? 0;

const pool = mysql.createPool({ uri: args.url, connectionLimit: 4 });
// Connections are opened before `go`, so that the requests race each other, not the connection set-up.
await Promise.all(Array.from({ length: 4 }, () => pool.query('SELECT 1')));
const { tablePrefix } = args;

if (args.role === 'revoke') {
  const store = new MysqlKeyStore({ client: pool, tablePrefix });
  const startedAt = now();
  await new KeyManager({ store }).revoke(args.id as string);
  say({ event: 'revoked', startedAt, returnedAt: now() });
} else if (args.role === 'watch') {
  const store = new MysqlKeyStore({ client: pool, tablePrefix });
  const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
  const off = store.subscribe((change) => {
    if (change.type === 'updated') say({ event: 'channel' });
  });
  const request = { headers: { 'x-api-key': args.secret as string }, ip: '203.0.113.7' };
  let ready = false;
  for (;;) {
    const result = await authenticate(request, cached);
    const at = now();
    if (result.ok && !ready) {
      ready = true;
      say({ event: 'ready' });
    } else if (!result.ok) {
      say({ event: 'refused', at, code: result.code });
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  off();
  cached.close();
  store.close();
} else if (args.role === 'consume') {
  const limiter = new MysqlRateLimiter({ client: pool, tablePrefix, timeoutMs: 30_000 });
  const policy = { limit: args.limit as number, windowMs: 60_000 };
  say({ event: 'ready' });
  await nextLine();
  const decisions = await Promise.all(
    Array.from({ length: n }, () => limiter.consume(args.keyId as string, policy, 1)),
  );
  const allowed = decisions.filter((d) => d.allowed);
  say({ event: 'done', allowed: allowed.length, remaining: allowed.map((d) => d.remaining) });
} else if (args.role === 'hold') {
  const ledger = new MysqlCreditLedger({ client: pool, tablePrefix, timeoutMs: 30_000 });
  const account = args.accountId as string;
  say({ event: 'ready' });
  await nextLine();
  const held = await Promise.all(
    Array.from({ length: n }, () => ledger.hold(account, 1, args.ttlMs ? { ttlMs: args.ttlMs } : {})),
  );
  say({ event: 'held', holdIds: held.flatMap((h) => (h.ok ? [h.holdId] : [])) });
  const { settle, release } = JSON.parse(await nextLine()) as { settle: string[]; release: string[] };
  const closed = await Promise.all([
    ...settle.map((id) => ledger.settle(id)),
    ...release.map(async (id) => ({ charged: 0, ...(await ledger.release(id)) })),
  ]);
  say({ event: 'closed', charged: closed.reduce((sum, c) => sum + c.charged, 0) });
} else {
  const ledger = new MysqlCreditLedger({ client: pool, tablePrefix, timeoutMs: 30_000 });
  const store = new MemoryKeyStore();
  const secret = args.secret as string;
  await new KeyManager({ store }).import({ secret, accountId: args.accountId as string, name: 'shared' });
  const options = { timeoutMs: 30_000, credits: { ledger, cost: 1 } };
  say({ event: 'ready' });
  await nextLine();
  const statuses = await Promise.all(
    Array.from({ length: n }, async () => {
      const result = await authenticate({ headers: { 'x-api-key': secret } }, store, options);
      if (result.ok) await finishCredits(result, 200, options);
      return result.ok ? (result.credits ? 'settled' : 'unbilled') : result.code;
    }),
  );
  say({ event: 'done', statuses });
}
await pool.end();
process.exit(0);
