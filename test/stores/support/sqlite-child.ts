// One process of the SQLite cross-process tests, bundled by esbuild and run by plain `node`, on the
// database file it is given. Roles:
//   watch:   a CachedKeyStore (TTL 60 s) over a SqliteKeyStore; authenticates the key every millisecond
//            and prints when the change table delivers a change and when the key is first refused.
//   revoke:  revokes the key; prints when the call started and returned.
//   consume: says `ready`, waits for `go`, fires `n` consumes of one unit; prints what was allowed.
//   hold:    says `ready`, waits for `go`, fires `n` holds of 1; prints the hold ids; then waits for
//            `{ settle, release }` and closes those; prints what it charged. A test may kill it instead.
//   bill:    says `ready`, waits for `go`, answers `n` requests of a live key through `authenticate`
//            with `credits` (cost 1) and settles the allowed ones; prints the statuses.
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { authenticate, CachedKeyStore, KeyManager, MemoryKeyStore } from 'keygate';
import { finishCredits } from 'keygate/adapter-kit';
import { SqliteCreditLedger, SqliteKeyStore, SqliteRateLimiter } from 'keygate/sqlite';

interface Args {
  role: 'watch' | 'revoke' | 'consume' | 'hold' | 'bill';
  path: string;
  secret?: string;
  id?: string;
  keyId?: string;
  accountId?: string;
  limit?: number;
  windowMs?: number;
  n?: number;
  ttlMs?: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const now = () => performance.timeOrigin + performance.now();
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const nextLine = async () => String((await lines.next()).value ?? '');
const database = new Database(args.path);

if (args.role === 'revoke') {
  const startedAt = now();
  await new KeyManager({ store: new SqliteKeyStore({ database }) }).revoke(args.id as string);
  say({ event: 'revoked', startedAt, returnedAt: now() });
} else if (args.role === 'watch') {
  const store = new SqliteKeyStore({ database });
  const cached = new CachedKeyStore(store, { ttlMs: 60_000 });
  const off = store.subscribe((change) => {
    if (change.type === 'updated') say({ event: 'channel' });
  });
  const request = { headers: { 'x-api-key': args.secret as string }, ip: '203.0.113.7' };
  let ready = false;
  for (;;) {
    const result = await authenticate(request, cached);
    if (result.ok && !ready) {
      ready = true;
      say({ event: 'ready' });
    } else if (!result.ok) {
      say({ event: 'refused', at: now(), code: result.code });
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  off();
  cached.close();
  store.close();
} else if (args.role === 'consume') {
  const limiter = new SqliteRateLimiter({ database, timeoutMs: 30_000 });
  const limit = { limit: args.limit as number, windowMs: args.windowMs as number };
  await limiter.consume(args.keyId as string, limit, 0); // prepares the statement before `go`
  say({ event: 'ready' });
  await nextLine();
  const decisions = await Promise.all(
    Array.from({ length: args.n as number }, () => limiter.consume(args.keyId as string, limit, 1)),
  );
  const allowed = decisions.filter((d) => d.allowed);
  say({ event: 'done', allowed: allowed.length, remaining: allowed.map((d) => d.remaining) });
} else if (args.role === 'hold') {
  const ledger = new SqliteCreditLedger({ database, timeoutMs: 30_000 });
  await ledger.hold(args.accountId as string, Number.MAX_SAFE_INTEGER); // prepares the statements
  say({ event: 'ready' });
  await nextLine();
  const held = await Promise.all(
    Array.from({ length: args.n as number }, () =>
      ledger.hold(args.accountId as string, 1, args.ttlMs ? { ttlMs: args.ttlMs } : {}),
    ),
  );
  say({ event: 'held', holdIds: held.flatMap((h) => (h.ok ? [h.holdId] : [])) });
  const { settle, release } = JSON.parse(await nextLine()) as { settle: string[]; release: string[] };
  const closed = await Promise.all([
    ...settle.map((id) => ledger.settle(id)),
    ...release.map(async (id) => ({ charged: 0, ...(await ledger.release(id)) })),
  ]);
  say({ event: 'closed', charged: closed.reduce((sum, c) => sum + c.charged, 0) });
} else {
  const ledger = new SqliteCreditLedger({ database, timeoutMs: 30_000 });
  await ledger.hold(args.accountId as string, Number.MAX_SAFE_INTEGER);
  const store = new MemoryKeyStore();
  await new KeyManager({ store }).import({
    secret: args.secret as string,
    accountId: args.accountId as string,
    name: 'shared',
  });
  const options = { timeoutMs: 30_000, credits: { ledger, cost: 1 } };
  say({ event: 'ready' });
  await nextLine();
  const statuses = await Promise.all(
    Array.from({ length: args.n as number }, async () => {
      const result = await authenticate({ headers: { 'x-api-key': args.secret as string } }, store, options);
      if (result.ok) await finishCredits(result, 200, options);
      return result.ok ? (result.credits ? 'settled' : 'unbilled') : result.code;
    }),
  );
  say({ event: 'done', statuses });
}
database.close();
process.exit(0);
