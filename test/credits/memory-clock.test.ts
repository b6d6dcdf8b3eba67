import { MemoryCreditLedger } from 'keygate';
import { afterEach, describe, expect, it, vi } from 'vitest';

function ledgerAt(start: number) {
  const time = { now: start };
  return { time, ledger: new MemoryCreditLedger({ clock: () => time.now }) };
}

async function holdOf(ledger: MemoryCreditLedger, accountId: string, amount: number, ttlMs?: number) {
  const held = await ledger.hold(accountId, amount, ttlMs === undefined ? {} : { ttlMs });
  if (!held.ok) throw new Error(`no hold of ${amount}`);
  return held.holdId;
}

describe('MemoryCreditLedger on its clock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps a hold until exactly ttlMs after it was taken, then returns its credits', async () => {
    const { time, ledger } = ledgerAt(1_000_000);
    await ledger.topUp('acct_1', 10);
    const holdId = await holdOf(ledger, 'acct_1', 4, 500);
    time.now += 499;
    expect(await ledger.balance('acct_1')).toBe(6);
    time.now += 1;
    expect(await ledger.balance('acct_1')).toBe(10);
    expect(await ledger.settle(holdId)).toEqual({ charged: 0, balance: 10 });
    expect(await ledger.entries('acct_1')).toHaveLength(1);
  });

  it('lapses a hold without ttlMs after 10 minutes', async () => {
    const { time, ledger } = ledgerAt(0);
    await ledger.topUp('acct_1', 10);
    await holdOf(ledger, 'acct_1', 10);
    time.now = 600_000 - 1;
    expect(await ledger.balance('acct_1')).toBe(0);
    time.now = 600_000;
    expect(await ledger.balance('acct_1')).toBe(10);
  });

  it("returns a lapsed hold's credits on a call about any account", async () => {
    const { time, ledger } = ledgerAt(0);
    await ledger.topUp('acct_1', 10);
    await holdOf(ledger, 'acct_1', 10, 100);
    time.now = 100;
    expect((await ledger.hold('acct_2', 1)).ok).toBe(false);
    expect(await ledger.hold('acct_1', 10)).toMatchObject({ ok: true, balance: 0 });
  });

  it('lapses each hold at its own ttl, whatever the order they were taken in', async () => {
    const { time, ledger } = ledgerAt(0);
    await ledger.topUp('acct_1', 100);
    await holdOf(ledger, 'acct_1', 1, 300);
    await holdOf(ledger, 'acct_1', 10, 100);
    await holdOf(ledger, 'acct_1', 20, 200);
    const balances: number[] = [];
    for (const at of [99, 100, 200, 299, 300]) {
      time.now = at;
      balances.push(await ledger.balance('acct_1'));
    }
    expect(balances).toEqual([69, 79, 99, 99, 100]);
  });

  it('still lapses the open holds after thousands of closed ones', async () => {
    const { time, ledger } = ledgerAt(0);
    await ledger.topUp('acct_1', 5_000);
    const open = await holdOf(ledger, 'acct_1', 7, 1_000);
    for (let i = 0; i < 3_000; i++) await ledger.release(await holdOf(ledger, 'acct_1', 1, 60_000));
    expect(await ledger.balance('acct_1')).toBe(4_993);
    time.now = 1_000;
    expect(await ledger.balance('acct_1')).toBe(5_000);
    expect(await ledger.release(open)).toEqual({ balance: 5_000 });
  });

  it("stamps each entry's createdAt from the clock", async () => {
    const { time, ledger } = ledgerAt(Date.parse('2026-03-01T12:00:00.000Z'));
    await ledger.topUp('acct_1', 10);
    const holdId = await holdOf(ledger, 'acct_1', 2);
    time.now += 1_500;
    await ledger.settle(holdId);
    expect((await ledger.entries('acct_1')).map((e) => e.createdAt)).toEqual([
      '2026-03-01T12:00:01.500Z',
      '2026-03-01T12:00:00.000Z',
    ]);
  });

  it('arms no timer, so nothing keeps the process alive', async () => {
    vi.useFakeTimers();
    const ledger = new MemoryCreditLedger();
    await ledger.topUp('acct_1', 10);
    await holdOf(ledger, 'acct_1', 3, 1_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('hands out copies of its entries: changing one changes nothing in the ledger', async () => {
    const ledger = new MemoryCreditLedger();
    await ledger.topUp('acct_1', 10);
    const [entry] = await ledger.entries('acct_1');
    if (entry) entry.amount = 1_000;
    expect((await ledger.entries('acct_1'))[0]?.amount).toBe(10);
  });

  it('answers the account balance for a settle or release of a hold it closed long ago', async () => {
    const { time, ledger } = ledgerAt(0);
    await ledger.topUp('acct_1', 10);
    const holdId = await holdOf(ledger, 'acct_1', 3, 100);
    await ledger.settle(holdId);
    time.now = 10 * 86_400_000;
    expect(await ledger.settle(holdId)).toEqual({ charged: 0, balance: 7 });
    expect(await ledger.release(holdId)).toEqual({ balance: 7 });
  });

  it('refuses a clock that is not a function, naming clock', () => {
    expect(() => new MemoryCreditLedger({ clock: 5 as unknown as () => number })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'clock' }),
    );
  });
});
