// A leased limiter or ledger bounds its waits for the shared store by a deadline of its own, declared
// as its `deadline` capability, so `authenticate` arms no timer of its own; a request its slice covers
// answers without waiting.
import {
  CreditLedgerUnavailableError,
  capabilityOf,
  LeasableMemoryRateLimiter,
  LeasedCreditLedger,
  LeasedRateLimiter,
  MemoryCreditLedger,
  RateLimiterUnavailableError,
} from 'keygate';
import { CAPABILITIES } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';

const limit = { limit: 1_000, windowMs: 60_000 };

describe('a leased limiter’s deadline', () => {
  it('is twice the shared limiter’s, or the one given, and bad values are refused naming timeoutMs', () => {
    const shared = new LeasableMemoryRateLimiter();
    expect(capabilityOf(new LeasedRateLimiter({ limiter: shared }), 'deadline')?.timeoutMs).toBe(1_000);
    const withOwn = Object.assign(Object.create(shared), {
      [CAPABILITIES]: { leases: shared, deadline: { timeoutMs: 250 } },
    });
    expect(capabilityOf(new LeasedRateLimiter({ limiter: withOwn }), 'deadline')?.timeoutMs).toBe(500);
    expect(new LeasedRateLimiter({ limiter: shared, timeoutMs: 40 }).timeoutMs).toBe(40);
    expect(() => new LeasedRateLimiter({ limiter: shared, timeoutMs: 0 })).toThrow(/timeoutMs/);
  });

  it('fails a request whose take does not answer in time, and answers the next from a slice at once', async () => {
    const shared = new LeasableMemoryRateLimiter();
    const leases = capabilityOf(shared, 'leases');
    let hang = true;
    const slow = {
      consume: shared.consume.bind(shared),
      [CAPABILITIES]: {
        leases: {
          take: (...args: Parameters<NonNullable<typeof leases>['take']>) =>
            hang
              ? new Promise<never>(() => {})
              : (leases?.take(...args) as ReturnType<NonNullable<typeof leases>['take']>),
          giveBack: leases?.giveBack.bind(leases) as NonNullable<typeof leases>['giveBack'],
        },
      },
    };
    const limiter = new LeasedRateLimiter({ limiter: slow, timeoutMs: 30 });
    await expect(limiter.consume('key_1', limit, 1)).rejects.toBeInstanceOf(RateLimiterUnavailableError);
    hang = false;
    // The hung take still owns the key's slice: a fresh key takes, then answers from its slice.
    expect(await limiter.consume('key_2', limit, 1)).toMatchObject({ allowed: true });
    expect(limiter.held('key_2')).toBeGreaterThan(0);
    await limiter.close();
  });
});

describe('a leased request its deadline answered', () => {
  it('spends nothing when its take lands later: the unit goes back, the rest of the slice is held', async () => {
    const shared = new LeasableMemoryRateLimiter();
    const leases = capabilityOf(shared, 'leases') as NonNullable<ReturnType<typeof capabilityOf<'leases'>>>;
    let land: (() => void) | undefined;
    const slow = {
      consume: shared.consume.bind(shared),
      [CAPABILITIES]: {
        leases: {
          // Answers only when the test lets it, long after the leased limiter's timeoutMs.
          take: async (...args: Parameters<typeof leases.take>) => {
            await new Promise<void>((resolve) => (land = resolve));
            return leases.take(...args);
          },
          giveBack: leases.giveBack.bind(leases),
        },
      },
    };
    const limiter = new LeasedRateLimiter({ limiter: slow, maxSlice: 8, timeoutMs: 30 });
    await expect(limiter.consume('key_1', limit, 1)).rejects.toBeInstanceOf(RateLimiterUnavailableError);
    land?.();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // The take granted 8: none went to the request that was refused.
    expect(limiter.held('key_1')).toBe(7);
    expect(await shared.consume('key_1', limit, 0)).toMatchObject({ remaining: limit.limit - 7 });
  });
});

describe('a leased slice’s background top-up', () => {
  it('bounds the requests that wait for it by timeoutMs, and gives back what it took once it lands late', async () => {
    const shared = new LeasableMemoryRateLimiter();
    const leases = capabilityOf(shared, 'leases') as NonNullable<ReturnType<typeof capabilityOf<'leases'>>>;
    let takes = 0;
    let landLate: (() => void) | undefined;
    const slow = {
      consume: shared.consume.bind(shared),
      [CAPABILITIES]: {
        leases: {
          // The second take (the first top-up) answers only when the test lets it, long after timeoutMs.
          take: async (...args: Parameters<typeof leases.take>) => {
            if (++takes === 2) await new Promise<void>((resolve) => (landLate = resolve));
            return leases.take(...args);
          },
          giveBack: leases.giveBack.bind(leases),
        },
      },
    };
    const limiter = new LeasedRateLimiter({ limiter: slow, maxSlice: 8, timeoutMs: 30 });
    let allowed = 0;
    // 8 units: the first take's 8 (one for its request, seven held); the top-up starts at one left.
    for (let i = 0; i < 8; i++) if ((await limiter.consume('key_1', limit, 1)).allowed) allowed++;
    expect(takes).toBe(2);
    const started = Date.now();
    // The slice is dry: this request waits for the hung top-up, at most timeoutMs, then takes on its own.
    expect(await limiter.consume('key_1', limit, 1)).toMatchObject({ allowed: true });
    allowed++;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(takes).toBe(3);
    landLate?.();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await limiter.close();
    // Every unit counted in the shared window was either allowed here or given back.
    expect(await shared.consume('key_1', limit, 0)).toMatchObject({ remaining: limit.limit - allowed });
  });
});

describe('a leased ledger’s background slice', () => {
  it('bounds the holds that wait for it by timeoutMs, and releases its hold once it lands late', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_1', 1_000);
    let holds = 0;
    let landLate: (() => void) | undefined;
    const slow = Object.assign(Object.create(inner), {
      // The second hold (the first background slice) answers only when the test lets it.
      hold: async (...args: Parameters<MemoryCreditLedger['hold']>) => {
        if (++holds === 2) await new Promise<void>((resolve) => (landLate = resolve));
        return inner.hold(...args);
      },
    });
    // Slices of 8 (half maxSlice): the first request's, then the next is sent with 3 left.
    const ledger = new LeasedCreditLedger({ ledger: slow, maxSlice: 16, timeoutMs: 30 });
    for (let i = 0; i < 8; i++) {
      const held = await ledger.hold('acct_1', 1, { keyId: 'key_1' });
      if (!held.ok) throw new Error('refused');
      await ledger.settle(held.holdId);
    }
    expect(holds).toBe(2);
    const started = Date.now();
    // The slice is spent: this hold waits for the hung one, at most timeoutMs, then takes its own slice.
    const ninth = await ledger.hold('acct_1', 1, { keyId: 'key_1' });
    if (!ninth.ok) throw new Error('refused');
    await ledger.settle(ninth.holdId);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(holds).toBe(3);
    landLate?.();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await ledger.close();
    expect(await inner.reconcile('acct_1')).toMatchObject({ balance: 991, held: 0, ok: true });
  });
});

describe('a leased ledger’s deadline', () => {
  it('is twice the shared ledger’s (2 s for keygate’s), or the one given', () => {
    const inner = new MemoryCreditLedger();
    expect(capabilityOf(new LeasedCreditLedger({ ledger: inner }), 'deadline')?.timeoutMs).toBe(2_000);
    expect(new LeasedCreditLedger({ ledger: inner, timeoutMs: 50 }).timeoutMs).toBe(50);
    expect(() => new LeasedCreditLedger({ ledger: inner, timeoutMs: -1 })).toThrow(/timeoutMs/);
  });

  it('fails a hold whose slice does not come in time; holds its slice covers answer without the shared ledger', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_1', 1_000);
    let hang = false;
    const waiting: (() => void)[] = [];
    const slow = Object.assign(Object.create(inner), {
      hold: async (...args: Parameters<MemoryCreditLedger['hold']>) => {
        if (hang) await new Promise<void>((resolve) => waiting.push(resolve));
        return inner.hold(...args);
      },
    });
    // A short slice ttl: the timed-out request's hold, made once its slice arrives, lapses in a quarter of it.
    const ledger = new LeasedCreditLedger({ ledger: slow, timeoutMs: 30, sliceTtlMs: 1_000 });
    const first = await ledger.hold('acct_1', 1, { keyId: 'key_1' });
    expect(first.ok).toBe(true);
    hang = true;
    // The slice covers it: no call to the (now hanging) shared ledger.
    const second = await ledger.hold('acct_1', 1, { keyId: 'key_1' });
    expect(second.ok).toBe(true);
    // Another key needs a slice of its own: the shared ledger hangs, the deadline fails it.
    await expect(ledger.hold('acct_1', 1, { keyId: 'key_2' })).rejects.toBeInstanceOf(CreditLedgerUnavailableError);
    hang = false;
    // The late slice still arrives and joins the process's slices; close() settles it with the rest.
    for (const resolve of waiting) resolve();
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const held of [first, second]) if (held.ok) await ledger.settle(held.holdId);
    await ledger.close();
    expect(await inner.reconcile('acct_1')).toMatchObject({ ok: true, held: 0 });
  });
});
