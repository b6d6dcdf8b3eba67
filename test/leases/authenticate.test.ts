// Leased budgets through `authenticate`: the same decisions, 429s and RateLimit fields as the limiter
// they wrap, and billed requests settled through a LeasedCreditLedger.
import {
  authenticate,
  CachedKeyStore,
  KeyManager,
  LeasableMemoryRateLimiter,
  LeasedCreditLedger,
  LeasedRateLimiter,
  MemoryCreditLedger,
  MemoryKeyStore,
  MemoryRateLimiter,
} from 'keygate';
import { authenticateEager, finishCredits } from 'keygate/adapter-kit';
import { describe, expect, it } from 'vitest';

async function seed() {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const key = await keys.create({
    accountId: 'acct_1',
    mode: 'live',
    name: 'limited',
    rateLimit: { limit: 5, windowMs: 60_000 },
  });
  return { store, request: { headers: { 'x-api-key': key.secret }, ip: '203.0.113.7' } };
}

describe('leased budgets through authenticate', () => {
  it('answers the same allows, 429s and remaining counts as the plain limiter, one process', async () => {
    const { store, request } = await seed();
    const run = async (limiter: MemoryRateLimiter | LeasedRateLimiter) => {
      const out: unknown[] = [];
      for (let i = 0; i < 7; i++) {
        const r = await authenticate(request, store, { rateLimit: { limiter } });
        out.push([r.ok ? 200 : r.status, r.ok ? undefined : r.code, r.rateLimit?.limit, r.rateLimit?.remaining]);
      }
      return out;
    };
    const plain = await run(new MemoryRateLimiter());
    const leased = await run(new LeasedRateLimiter({ limiter: new LeasableMemoryRateLimiter() }));
    expect(leased).toEqual(plain);
    expect(plain.at(-1)).toEqual([429, 'rate_limited', 5, 0]);
  });

  it('holds and settles billed requests through a LeasedCreditLedger, charging the key once its slice settles', async () => {
    const { store, request } = await seed();
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_1', 100);
    const ledger = new LeasedCreditLedger({ ledger: inner, maxSlice: 10, divisor: 1 });
    const auth = { credits: { ledger, cost: 2 } };
    for (let i = 0; i < 4; i++) {
      const r = await authenticate(request, store, auth);
      if (!r.ok) throw new Error(`refused: ${r.code}`);
      expect(r.credits?.cost).toBe(2);
      await finishCredits(r, i === 3 ? 503 : 200, auth);
    }
    await ledger.close();
    const charges = (await inner.entries('acct_1')).filter((e) => e.kind === 'charge');
    expect(charges.reduce((n, e) => n - e.amount, 0)).toBe(6);
    expect(charges.every((e) => typeof e.keyId === 'string')).toBe(true);
    expect(await inner.reconcile('acct_1')).toMatchObject({ balance: 94, held: 0, ok: true });
  });

  it('decides a request its leased slice covers at once, with no promise, and waits only for a take', async () => {
    const store = new MemoryKeyStore();
    const keys = new KeyManager({ store });
    const key = await keys.create({
      accountId: 'acct_1',
      mode: 'live',
      name: 'far from its limits',
      rateLimit: [
        { name: 'burst', limit: 1_000, windowMs: 1_000 },
        { name: 'daily', limit: 100_000, windowMs: 86_400_000 },
      ],
    });
    const request = { headers: { 'x-api-key': key.secret }, ip: '203.0.113.7' };
    const cached = new CachedKeyStore(store);
    const credits = new MemoryCreditLedger();
    await credits.topUp('acct_1', 1_000);
    const ledger = new LeasedCreditLedger({ ledger: credits, maxSlice: 10 });
    const auth = {
      rateLimit: { limiter: new LeasedRateLimiter({ limiter: new LeasableMemoryRateLimiter() }) },
      credits: { ledger },
    };
    // The first request finds no slice (and no cached key): it waits for the store and both takes.
    const first = authenticateEager(request, cached, auth);
    expect('then' in first).toBe(true);
    const opened = await first;
    if (!opened.ok) throw new Error(`refused: ${opened.code}`);
    expect(await finishCredits(opened, 200, auth)).toBeUndefined();
    const answers: boolean[] = [];
    for (let i = 0; i < 5; i++) {
      const r = authenticateEager(request, cached, auth);
      answers.push('then' in r);
      const result = 'then' in r ? await r : r;
      if (!result.ok) throw new Error(`refused: ${result.code}`);
      expect(result.rateLimit?.policies?.map((p) => p.name)).toEqual(['burst', 'daily']);
      expect(result.credits?.holdId).toMatch(/^lease_/);
      await finishCredits(result, 200, auth);
    }
    expect(answers).toEqual([false, false, false, false, false]);
    await ledger.close();
    expect(await credits.balance('acct_1')).toBe(994);
  });
});
