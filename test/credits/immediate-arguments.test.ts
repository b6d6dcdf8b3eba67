// The paths that answer at once (MemoryCreditLedger's `synchronous` capability, LeasedCreditLedger's
// `holdNow`, LeasedRateLimiter's `consumeNow`) refuse what `hold`, `settle` and `consume` refuse: anyone
// may reach them through `capabilityOf`, and a negative amount there must never add credits or units.
import {
  capabilityOf,
  LeasableMemoryRateLimiter,
  LeasedCreditLedger,
  LeasedRateLimiter,
  MemoryCreditLedger,
} from 'keygate';
import { describe, expect, it } from 'vitest';

/** Amounts no hold takes: [what, amount]. */
const BAD_AMOUNTS: Array<[string, unknown]> = [
  ['a negative amount', -1_000],
  ['a fractional amount', 0.001],
  ['NaN', Number.NaN],
  ['an infinity', Number.POSITIVE_INFINITY],
  ['2**53, past the safe integers', 2 ** 53],
  ['a huge negative amount', -Number.MAX_SAFE_INTEGER],
  ['zero', 0],
  ['a numeric string', '5'],
];

const refusedAmount = { code: 'invalid_input', field: 'amount' };

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  return undefined;
}

async function memoryLedger() {
  const ledger = new MemoryCreditLedger();
  await ledger.topUp('acct_1', 100);
  const sync = capabilityOf(ledger, 'synchronous');
  if (!sync) throw new Error('MemoryCreditLedger declares synchronous');
  return { ledger, sync };
}

describe('MemoryCreditLedger, synchronously', () => {
  it.each(BAD_AMOUNTS)(
    'holdSync of %s throws InvalidInputError naming amount; the balance stays 100',
    async (_, amount) => {
      const { ledger, sync } = await memoryLedger();
      expect(thrown(() => sync.holdSync('acct_1', amount as number, { keyId: 'key_1' }))).toMatchObject(refusedAmount);
      expect(await ledger.balance('acct_1')).toBe(100);
      expect(await ledger.reconcile('acct_1')).toMatchObject({ ok: true, held: 0 });
    },
  );

  it('1,000 holds of a fraction are all refused: nothing is served on credits never charged', async () => {
    const { ledger, sync } = await memoryLedger();
    let served = 0;
    for (let i = 0; i < 1_000; i++) {
      if (thrown(() => sync.holdSync('acct_1', 0.1)) === undefined) served++;
    }
    expect(served).toBe(0);
    expect(await ledger.balance('acct_1')).toBe(100);
  });

  it('holdSync refuses a bad ttlMs, a misspelt option and a bad account id, holding nothing', async () => {
    const { ledger, sync } = await memoryLedger();
    expect(thrown(() => sync.holdSync('acct_1', 1, { ttlMs: -1 }))).toMatchObject({ field: 'ttlMs' });
    expect(thrown(() => sync.holdSync('acct_1', 1, { ttl: 5 } as never))).toMatchObject({
      field: 'ttl',
      issues: [expect.objectContaining({ reason: 'unknown_option' })],
    });
    expect(thrown(() => sync.holdSync('', 1))).toMatchObject({ field: 'accountId' });
    expect(thrown(() => sync.holdSync('acct_1', 1, { keyId: 42 as never }))).toMatchObject({ field: 'keyId' });
    expect(await ledger.balance('acct_1')).toBe(100);
  });

  it('settleSync of a negative amount throws and returns nothing to the balance; a good settle still charges', async () => {
    const { ledger, sync } = await memoryLedger();
    const held = sync.holdSync('acct_1', 10);
    if (!held.ok) throw new Error('held');
    expect(thrown(() => sync.settleSync(held.holdId, -1_000))).toMatchObject(refusedAmount);
    expect(thrown(() => sync.settleSync(held.holdId, 0.5))).toMatchObject(refusedAmount);
    expect(await ledger.balance('acct_1')).toBe(90);
    expect(sync.settleSync(held.holdId, 4)).toEqual({ charged: 4, balance: 96 });
    expect(await ledger.reconcile('acct_1')).toMatchObject({ ok: true, entries: 96 });
  });

  it('settleSync and releaseSync refuse a hold id that cannot be one', async () => {
    const { sync } = await memoryLedger();
    expect(thrown(() => sync.settleSync(42 as never))).toMatchObject({ field: 'holdId' });
    expect(thrown(() => sync.releaseSync('' as never))).toMatchObject({ field: 'holdId' });
  });
});

async function leasedLedger() {
  const shared = new MemoryCreditLedger();
  await shared.topUp('acct_1', 100);
  const ledger = new LeasedCreditLedger({ ledger: shared, maxSlice: 50, prefetch: false });
  // One hold takes a slice, so that holdNow has one to answer from.
  const first = await ledger.hold('acct_1', 1, { keyId: 'key_1' });
  if (!first.ok) throw new Error('held');
  return { ledger, shared, first };
}

describe('LeasedCreditLedger.holdNow', () => {
  it.each(BAD_AMOUNTS)(
    'of %s throws InvalidInputError naming amount; the slice and balance are unchanged',
    async (_, amount) => {
      const { ledger, shared, first } = await leasedLedger();
      const free = ledger.free('acct_1');
      const shared0 = await shared.balance('acct_1');
      expect(thrown(() => ledger.holdNow('acct_1', amount as number, { keyId: 'key_1' }))).toMatchObject(refusedAmount);
      expect(ledger.free('acct_1')).toBe(free);
      expect(await shared.balance('acct_1')).toBe(shared0);
      await ledger.settle(first.holdId);
      await ledger.close();
      expect(await shared.balance('acct_1')).toBe(99);
    },
  );

  it('refuses a misspelt option and a bad keyId as hold does', async () => {
    const { ledger, first } = await leasedLedger();
    expect(thrown(() => ledger.holdNow('acct_1', 1, { keyid: 'key_1' } as never))).toMatchObject({
      field: 'keyid',
      issues: [expect.objectContaining({ reason: 'unknown_option' })],
    });
    expect(thrown(() => ledger.holdNow('acct_1', 1, { keyId: '' }))).toMatchObject({ field: 'keyId' });
    await ledger.settle(first.holdId);
    await ledger.close();
  });

  it('still answers a good hold from its slice', async () => {
    const { ledger, first } = await leasedLedger();
    const held = ledger.holdNow('acct_1', 2, { keyId: 'key_1' });
    expect(held).toMatchObject({ ok: true });
    if (held?.ok) await ledger.settle(held.holdId);
    await ledger.settle(first.holdId);
    await ledger.close();
  });
});

describe('LeasedRateLimiter.consumeNow', () => {
  const limit = { limit: 100, windowMs: 60_000 };

  it.each([
    ['a negative cost', -50],
    ['a fractional cost', 0.5],
    ['NaN', Number.NaN],
  ])('of %s throws InvalidInputError naming cost; the slice keeps its units', async (_, cost) => {
    const limiter = new LeasedRateLimiter({ limiter: new LeasableMemoryRateLimiter(), prefetch: false });
    await limiter.consume('key_1', limit, 1);
    const held = limiter.held('key_1');
    expect(thrown(() => limiter.consumeNow('key_1', limit, cost))).toMatchObject({
      code: 'invalid_input',
      field: 'cost',
    });
    expect(limiter.held('key_1')).toBe(held);
    await limiter.close();
  });

  it('refuses a limit that is not one, and a bad key id', async () => {
    const limiter = new LeasedRateLimiter({ limiter: new LeasableMemoryRateLimiter(), prefetch: false });
    await limiter.consume('key_1', limit, 1);
    expect(thrown(() => limiter.consumeNow('key_1', { limit: -1, windowMs: 60_000 }, 1))).toMatchObject({
      field: 'limit',
    });
    expect(thrown(() => limiter.consumeNow('', limit, 1))).toMatchObject({ field: 'keyId' });
    expect(limiter.consumeNow('key_1', limit, 1)).toMatchObject({ allowed: true });
    await limiter.close();
  });
});
