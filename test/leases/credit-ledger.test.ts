import {
  CreditLedgerUnavailableError,
  capabilityOf,
  InvalidInputError,
  LeasedCreditLedger,
  MemoryCreditLedger,
} from 'keygate';
import type { CreditLedger } from 'keygate/store-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { expectPendingUntil } from './support/pending.js';

function manual(start = 1_000_000) {
  let now = start;
  return {
    clock: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** A ledger that counts the calls reaching it (each a round trip for a shared ledger). */
function counted(inner: CreditLedger) {
  const calls = { hold: 0, settle: 0 };
  const ledger: CreditLedger = {
    topUp: (a, n, o) => inner.topUp(a, n, o),
    balance: (a) => inner.balance(a),
    hold: (a, n, o) => {
      calls.hold++;
      return inner.hold(a, n, o);
    },
    settle: (h, n) => {
      calls.settle++;
      return inner.settle(h, n);
    },
    release: (h) => inner.release(h),
    entries: (a, o) => inner.entries(a, o),
    reconcile: (a) => inner.reconcile(a),
  };
  return { ledger, calls };
}

const opened: LeasedCreditLedger[] = [];
function leased(ledger: CreditLedger, options: Partial<ConstructorParameters<typeof LeasedCreditLedger>[0]> = {}) {
  const l = new LeasedCreditLedger({ ledger, ...options });
  opened.push(l);
  return l;
}
afterEach(async () => {
  for (const l of opened.splice(0)) await l.close();
});

describe('LeasedCreditLedger', () => {
  it('refuses something that is not a ledger, naming ledger', () => {
    expect(() => new LeasedCreditLedger({ ledger: {} as CreditLedger })).toThrow(InvalidInputError);
  });

  it('holds at most 1,000 credits free per account and key by default', () => {
    const l = leased(new MemoryCreditLedger());
    expect([l.maxSlice, l.divisor, l.sliceTtlMs]).toEqual([1000, 8, 120_000]);
  });

  it('costs one hold and one settle per slice of half maxSlice for a funded account (about 0.004 round trips a request by default)', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_far', 1_000_000);
    const { ledger, calls } = counted(inner);
    const l = leased(ledger);
    for (let i = 0; i < 10_000; i++) {
      const held = await l.hold('acct_far', 1, { keyId: 'key_1' });
      if (!held.ok) throw new Error('refused');
      await l.settle(held.holdId);
    }
    await l.close();
    // Slices of 500: each next one is taken while its predecessor is live, and the two together hold
    // at most maxSlice unconfirmed (what a crash could leave unbilled).
    expect(calls.hold).toBe(calls.settle);
    expect(calls.hold).toBe(21);
    expect((calls.hold + calls.settle) / 10_000).toBeLessThan(0.0045);
    expect(await inner.balance('acct_far')).toBe(1_000_000 - 10_000);
    expect((await inner.reconcile('acct_far')).ok).toBe(true);
  });

  it('takes the next slice before the current one runs dry, so no hold of a funded account waits for the shared ledger', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_far', 1_000_000);
    const l = leased(inner, { maxSlice: 100 });
    const first = await l.hold('acct_far', 1, { keyId: 'key_1' });
    if (!first.ok) throw new Error('refused');
    l.settleNow(first.holdId);
    for (let i = 0; i < 1000; i++) {
      const held = l.holdNow('acct_far', 1, { keyId: 'key_1' });
      expect(held).toMatchObject({ ok: true });
      expect(l.settleNow((held as { holdId: string }).holdId)).toMatchObject({ charged: 1 });
      // Never more free for the account than one slice would give, the next slice included.
      expect(l.free('acct_far')).toBeLessThanOrEqual(99);
      // What a background take held lands before the next request comes (this ledger answers at once).
      await new Promise((resolve) => setImmediate(resolve));
    }
    await l.close();
    expect(await inner.balance('acct_far')).toBe(1_000_000 - 1001);
    expect((await inner.reconcile('acct_far')).ok).toBe(true);
  });

  it('takes the slice after next earlier when more than a quarter of a slice went while the next was on its way, and only once the slice before has settled', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_slow', 1_000_000);
    const sent: Array<() => void> = [];
    // A shared ledger that answers a hold only when the test lets it: a slow store.
    const slow: CreditLedger = {
      ...counted(inner).ledger,
      hold: (a, n, o) => new Promise((resolve) => sent.push(() => resolve(inner.hold(a, n, o)))),
    };
    const l = leased(slow, { maxSlice: 100 });
    const turns = async () => {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    const land = async () => {
      sent.shift()?.();
      await turns();
    };
    const first = l.hold('acct_slow', 1, { keyId: 'key_1' });
    await land();
    l.settleNow(((await first) as { holdId: string }).holdId);
    const spend = (n: number) => {
      for (let i = 0; i < n; i++) {
        const held = l.holdNow('acct_slow', 1, { keyId: 'key_1' });
        expect(held).toMatchObject({ ok: true });
        l.settleNow((held as { holdId: string }).holdId);
      }
    };
    // A slice of 50 (half maxSlice), 49 free: half (24) left sends the hold of the next slice, 50 credits.
    spend(25);
    expect([l.free('acct_slow'), sent.length]).toEqual([24, 1]);
    // 20 go while it is on its way: the next slice takes the one after it with 2 × 20 = 40 left, capped
    // at three quarters of its 50 (37), not at half (25).
    spend(20);
    await land();
    expect(l.free('acct_slow')).toBe(4 + 50);
    // The first slice runs dry, requests move to the next and the first settles; 13 later the next is
    // down to 37, but the first slice's settle has not landed: no room for a third slice yet.
    spend(4 + 13);
    expect([l.free('acct_slow'), sent.length]).toEqual([37, 0]);
    // Its settle lands: the slice after next is sent at once.
    await turns();
    expect(sent).toHaveLength(1);
    // idle() waits for the slice on its way: then free counts it too (37 and its successor of 50).
    await expectPendingUntil(l.idle(), land);
    expect(l.free('acct_slow')).toBe(87);
  });

  it('holds the next slice only when one runs dry with prefetch off', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_far', 1_000_000);
    const { ledger, calls } = counted(inner);
    const l = leased(ledger, { maxSlice: 100, prefetch: false });
    for (let i = 0; i < 1000; i++) {
      const held = await l.hold('acct_far', 1, { keyId: 'key_1' });
      if (!held.ok) throw new Error('refused');
      await l.settle(held.holdId);
    }
    await l.close();
    expect(calls.hold).toBe(10);
    expect(() => leased(inner, { prefetch: 1 as never })).toThrow(expect.objectContaining({ field: 'prefetch' }));
  });

  it('answers holdNow, settleNow and releaseNow only for what its slices hold, and declares them', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_1', 1_000);
    const l = leased(inner, { maxSlice: 10 });
    expect(capabilityOf(l, 'immediateCredits')).toBe(l);
    expect(l.holdNow('acct_1', 1, { keyId: 'key_1' })).toBeUndefined();
    const first = await l.hold('acct_1', 1, { keyId: 'key_1' });
    if (!first.ok) throw new Error('refused');
    expect(l.settleNow(first.holdId)).toMatchObject({ charged: 1 });
    expect(l.holdNow('acct_1', 50, { keyId: 'key_1' })).toBeUndefined();
    expect(l.holdNow('acct_1', 1, { keyId: 'key_1', ttlMs: 100_000 })).toBeUndefined();
    const held = l.holdNow('acct_1', 2, { keyId: 'key_1' });
    if (!held?.ok) throw new Error('not held at once');
    expect(l.releaseNow(held.holdId)).toEqual({ balance: expect.any(Number) });
    expect(l.settleNow(held.holdId)).toBeUndefined();
    const direct = await inner.hold('acct_1', 1);
    if (!direct.ok) throw new Error('refused');
    expect(l.settleNow(direct.holdId)).toBeUndefined();
    await inner.release(direct.holdId);
  });

  it('writes one charge entry per slice, carrying its key, summing what its requests settled', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_keys', 10_000);
    const l = leased(inner, { maxSlice: 50, divisor: 1 });
    for (let i = 0; i < 30; i++) {
      const a = await l.hold('acct_keys', 2, { keyId: 'key_a' });
      const b = await l.hold('acct_keys', 1, { keyId: 'key_b' });
      if (!a.ok || !b.ok) throw new Error('refused');
      await l.settle(a.holdId);
      // key_b's requests are half settled, half released (a 5xx): released ones are never charged.
      await (i % 2 === 0 ? l.settle(b.holdId) : l.release(b.holdId));
    }
    await l.close();
    const charges = (await inner.entries('acct_keys')).filter((e) => e.kind === 'charge');
    const byKey = (k: string) => charges.filter((e) => e.keyId === k).reduce((s, e) => s - e.amount, 0);
    expect(byKey('key_a')).toBe(60);
    expect(byKey('key_b')).toBe(15);
    expect(charges.every((e) => e.keyId === 'key_a' || e.keyId === 'key_b')).toBe(true);
    expect(charges.length).toBeLessThanOrEqual(4);
    expect(await inner.balance('acct_keys')).toBe(10_000 - 75);
    expect((await inner.reconcile('acct_keys')).ok).toBe(true);
  });

  it('settles a part of a hold and refuses more than was held, naming amount', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_part', 100);
    const l = leased(inner, { maxSlice: 20, divisor: 1 });
    const held = await l.hold('acct_part', 5);
    if (!held.ok) throw new Error('refused');
    await expect(l.settle(held.holdId, 6)).rejects.toMatchObject({ code: 'invalid_input', field: 'amount' });
    expect(await l.settle(held.holdId, 3)).toMatchObject({ charged: 3 });
    expect(await l.settle(held.holdId)).toMatchObject({ charged: 0 });
    await l.close();
    expect(await inner.balance('acct_part')).toBe(97);
  });

  it('keeps one slice per account and key when a request arrives while the spent slice settles: no credit is stranded', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_race', 100);
    // The shared ledger's settle takes a round trip (a timer turn), as every shared backend's does.
    const ledger: CreditLedger = {
      ...counted(inner).ledger,
      settle: async (h, n) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return inner.settle(h, n);
      },
    };
    const l = leased(ledger, { maxSlice: 10, divisor: 1 });
    let served = 0;
    const one = async () => {
      const held = await l.hold('acct_race', 1, { keyId: 'key_1' });
      if (!held.ok) return;
      await l.settle(held.holdId);
      served++;
    };
    // Requests arrive one after another, each while the one before it may still be settling a slice.
    await Promise.all(
      Array.from({ length: 150 }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, i));
        await one();
      }),
    );
    // Every credit was spent, or sits free in the instance's one slice, or is back in the shared balance.
    expect(served + l.free('acct_race') + (await inner.balance('acct_race'))).toBe(100);
    expect(served).toBe(100);
  });

  it('tries smaller slices while other processes take, and refuses only once the shared balance is below the cost', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_shrink', 100);
    // Another process's holds land just before each of this instance's first two holds reach the ledger.
    const before = [95, 2];
    const ledger: CreditLedger = {
      ...counted(inner).ledger,
      hold: async (a, n, o) => {
        const other = before.shift();
        if (other !== undefined) await inner.hold(a, other);
        return inner.hold(a, n, o);
      },
    };
    const l = leased(ledger, { maxSlice: 20, divisor: 1 });
    // 10 (half maxSlice; refused: 5 left), 5 (refused: 3 left), then 3: served, with the last 3 credits as its slice.
    const held = await l.hold('acct_shrink', 1, { keyId: 'key_1' });
    expect(held.ok).toBe(true);
    expect([l.free('acct_shrink'), await inner.balance('acct_shrink')]).toEqual([2, 0]);
    if (held.ok) await l.settle(held.holdId);
  });

  it('never overdraws: three instances hammering one account charge at most its balance, and reconcile stays ok', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_race', 1000);
    const maxSlice = 10;
    const ls = [0, 1, 2].map(() => leased(inner, { maxSlice, divisor: 2 }));
    let charged = 0;
    await Promise.all(
      Array.from({ length: 1500 }, async (_, i) => {
        const l = ls[i % 3] as LeasedCreditLedger;
        const held = await l.hold('acct_race', 1, { keyId: 'key_race' });
        if (!held.ok) return;
        const settled = await l.settle(held.holdId);
        charged += settled.charged;
      }),
    );
    expect(charged).toBeLessThanOrEqual(1000);
    expect(1000 - charged).toBeLessThanOrEqual(2 * (maxSlice - 1));
    for (const l of ls) await l.close();
    expect(await inner.balance('acct_race')).toBe(1000 - charged);
    expect((await inner.reconcile('acct_race')).ok).toBe(true);
  });

  it('refuses early by at most (instances - 1) * (maxSlice - 1) credits per key: exactly what the other holds free', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_bound', 200);
    const maxSlice = 10;
    const [a, b] = [leased(inner, { maxSlice, divisor: 1 }), leased(inner, { maxSlice, divisor: 1 })];
    // Three requests on the first instance: its slice of 5 is down to 2, and it holds the next (5).
    for (let i = 0; i < 3; i++) {
      const held = await a?.hold('acct_bound', 1, { keyId: 'key_1' });
      if (!held?.ok) throw new Error('refused');
      await a?.settle(held.holdId);
    }
    await a?.idle();
    let served = 3;
    for (;;) {
      const held = await b?.hold('acct_bound', 1, { keyId: 'key_1' });
      if (!held?.ok) break;
      await b?.settle(held.holdId);
      served++;
    }
    expect(a?.free('acct_bound')).toBe(7);
    expect(served).toBe(200 - 7);
    expect(7).toBeLessThanOrEqual(maxSlice - 1);
  });

  it("returns an abandoned instance's slice by expiry: the shared balance is whole again after sliceTtlMs", async () => {
    const time = manual();
    const inner = new MemoryCreditLedger({ clock: time.clock });
    await inner.topUp('acct_dead', 100);
    // An instance that is never closed (a process killed): its slice lapses in the shared ledger.
    const dead = new LeasedCreditLedger({
      ledger: inner,
      maxSlice: 80,
      divisor: 1,
      sliceTtlMs: 10_000,
      clock: time.clock,
    });
    const held = await dead.hold('acct_dead', 1, { keyId: 'key_1' });
    if (!held.ok) throw new Error('refused');
    await dead.settle(held.holdId);
    expect(await inner.balance('acct_dead')).toBe(60);
    time.advance(10_000);
    expect(await inner.balance('acct_dead')).toBe(100);
    expect((await inner.reconcile('acct_dead')).ok).toBe(true);
    await dead.close();
    expect(dead.uncharged).toBe(1);
  });

  it('settles a slice once it is older than half its ttl, so its charge lands before the slice could lapse', async () => {
    const time = manual();
    const inner = new MemoryCreditLedger({ clock: time.clock });
    await inner.topUp('acct_old', 100);
    const l = leased(inner, { maxSlice: 40, divisor: 1, sliceTtlMs: 10_000, clock: time.clock });
    const one = await l.hold('acct_old', 3, { keyId: 'key_1' });
    if (!one.ok) throw new Error('refused');
    await l.settle(one.holdId);
    time.advance(5_000);
    const two = await l.hold('acct_old', 2, { keyId: 'key_1' });
    if (!two.ok) throw new Error('refused');
    // The first slice was settled before the second was taken: one entry of 3 already.
    expect((await inner.entries('acct_old')).filter((e) => e.kind === 'charge').map((e) => e.amount)).toEqual([-3]);
    await l.settle(two.holdId);
  });

  it('holds a request asking for a ttlMs longer than a quarter of sliceTtlMs from the shared ledger directly', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_long', 100);
    const l = leased(inner, { sliceTtlMs: 60_000 });
    const held = await l.hold('acct_long', 5, { keyId: 'key_1', ttlMs: 600_000 });
    if (!held.ok) throw new Error('refused');
    expect(held.holdId.startsWith('lease_')).toBe(false);
    expect(await l.settle(held.holdId)).toMatchObject({ charged: 5, balance: 95 });
  });
});

describe('LeasedCreditLedger when the shared ledger fails', () => {
  /** `inner` with a switch: while `down`, every hold and settle fails as an unreachable store's does. */
  function outage(inner: CreditLedger) {
    const state = { down: false };
    const unreachable = () => Promise.reject(new CreditLedgerUnavailableError('the store is unreachable'));
    const ledger: CreditLedger = {
      ...counted(inner).ledger,
      hold: (a, n, o) => (state.down ? unreachable() : inner.hold(a, n, o)),
      settle: (h, n) => (state.down ? unreachable() : inner.settle(h, n)),
    };
    return { ledger, state };
  }
  const charged = async (inner: CreditLedger, accountId: string) =>
    (await inner.entries(accountId, { limit: 1000 })).reduce((n, e) => (e.kind === 'charge' ? n - e.amount : n), 0);

  it('serves at most maxSlice credits per account and key that the ledger has not charged, then fails like the ledger', async () => {
    const inner = new MemoryCreditLedger();
    await inner.topUp('acct_out', 10_000);
    const { ledger, state } = outage(inner);
    const l = leased(ledger, { maxSlice: 100, timeoutMs: 200 });
    const spend = async () => {
      const held = await l.hold('acct_out', 1, { keyId: 'key_1' });
      if (!held.ok) throw new Error('refused');
      await l.settle(held.holdId);
    };
    // Past the first slice and into the next: the worst moment for a crash.
    for (let i = 0; i < 55; i++) await spend();
    await l.idle();
    state.down = true;
    let served = 55;
    const failure = await (async () => {
      for (;;) {
        await spend();
        served++;
      }
    })().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(CreditLedgerUnavailableError);
    // What a crash now would leave unbilled: served, and not charged by the ledger.
    expect(served - (await charged(inner, 'acct_out'))).toBeLessThanOrEqual(100);
    // The store is back: every slice settles, every credit served is charged.
    state.down = false;
    await l.close();
    expect([await charged(inner, 'acct_out'), l.uncharged, l.unresolved]).toEqual([served, 0, 0]);
    expect((await inner.reconcile('acct_out')).ok).toBe(true);
  });

  it("counts a slice as charged when its settle's answer was lost and a retry answers charged 0 before the hold could lapse", async () => {
    const time = manual();
    const inner = new MemoryCreditLedger({ clock: time.clock });
    await inner.topUp('acct_lost', 100);
    let attempts = 0;
    const ledger: CreditLedger = {
      ...counted(inner).ledger,
      // The first settle is applied, and its answer is lost on the way back.
      settle: async (h, n) => {
        const answer = await inner.settle(h, n);
        if (++attempts === 1) throw new CreditLedgerUnavailableError('the connection dropped');
        return answer;
      },
    };
    const l = leased(ledger, { maxSlice: 20, sliceTtlMs: 10_000, clock: time.clock });
    for (let i = 0; i < 3; i++) {
      const held = await l.hold('acct_lost', 1, { keyId: 'key_1' });
      if (!held.ok) throw new Error('refused');
      await l.settle(held.holdId);
    }
    await l.close();
    expect(attempts).toBe(2);
    expect([l.uncharged, l.unresolved]).toEqual([0, 0]);
    expect(await charged(inner, 'acct_lost')).toBe(3);
  });

  it("counts a slice as unresolved, never uncharged, when its settle's answer was lost and the retry's answer came after the hold could have lapsed", async () => {
    const time = manual();
    const inner = new MemoryCreditLedger({ clock: time.clock });
    await inner.topUp('acct_late', 100);
    let attempts = 0;
    const ledger: CreditLedger = {
      ...counted(inner).ledger,
      settle: async (h, n) => {
        const answer = await inner.settle(h, n);
        if (++attempts > 1) return answer;
        // Applied, its answer lost, and the next attempt only 9.5 s later: its hold (10 s) may have lapsed.
        time.advance(9_500);
        throw new CreditLedgerUnavailableError('the connection dropped');
      },
    };
    const l = leased(ledger, { maxSlice: 20, sliceTtlMs: 10_000, clock: time.clock });
    const held = await l.hold('acct_late', 3, { keyId: 'key_1' });
    if (!held.ok) throw new Error('refused');
    await l.settle(held.holdId);
    await l.close();
    expect([l.uncharged, l.unresolved]).toEqual([0, 3]);
    expect(await charged(inner, 'acct_late')).toBe(3);
  });
});
