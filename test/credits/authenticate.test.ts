// Check row 10 through `authenticate`: prepaid credits held for a live key's request, the 402, 500
// and 503 it can answer, the events it emits and what it reports to telemetry.
import {
  type AuthRequest,
  type AuthResult,
  authenticate,
  authenticateEager,
  CachedKeyStore,
  type CreditLedger,
  CreditLedgerUnavailableError,
  capabilityOf,
  type KeygateEvent,
  MemoryCreditLedger,
} from 'keygate';
import { finishCredits } from 'keygate/adapter-kit';
import { CAPABILITIES, METRICS } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';
import { seededStore } from '../support/fixtures.js';
import { memoryTelemetry } from '../telemetry/support.js';

const INSIDE = '203.0.113.7';
const s = await seededStore();
const live = (): AuthRequest => ({ headers: { 'x-api-key': s.valid.secret }, ip: INSIDE });
const test = (): AuthRequest => ({ headers: { 'x-api-key': s.open.secret }, ip: INSIDE });
const ACCOUNT = s.valid.key.accountId;

/**
 * A MemoryCreditLedger that records the name of every method called on it, its synchronous
 * capability's (`holdSync`, ...) included: the way `authenticate` reaches a memory ledger.
 */
function recordingLedger(): MemoryCreditLedger & { calls: string[] } {
  const inner = new MemoryCreditLedger();
  const calls: string[] = [];
  const recorded = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop) {
        const value = Reflect.get(t, prop, t);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(prop));
          return value.apply(t, args);
        };
      },
    });
  const sync = capabilityOf(inner, 'synchronous');
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'calls') return calls;
      if (prop === CAPABILITIES) return { ...target[CAPABILITIES], synchronous: sync && recorded(sync) };
      const value = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return value.apply(target, args);
      };
    },
  }) as MemoryCreditLedger & { calls: string[] };
}

const down = () => Promise.reject(new CreditLedgerUnavailableError('down', new Error('ECONNREFUSED')));
/** A ledger whose every call fails, the way one whose database is down does. */
const failingLedger: CreditLedger = {
  topUp: down,
  balance: down,
  hold: down,
  settle: down,
  release: down,
  entries: down,
  reconcile: down,
};
/** A ledger that never answers (and declares no deadline of its own). */
const never = () => new Promise<never>(() => {});
const hangingLedger: CreditLedger = {
  topUp: never,
  balance: never,
  hold: never,
  settle: never,
  release: never,
  entries: never,
  reconcile: never,
};

/** An allow of key `id` without `credits` (nor anything else). */
const plainAllow = (id: string) => ({ ok: true, status: 200, key: expect.objectContaining({ id }) });

function events(): { hook: (e: KeygateEvent) => void; seen: KeygateEvent[] } {
  const seen: KeygateEvent[] = [];
  return { hook: (e) => void seen.push(e), seen };
}

async function funded(amount: number) {
  const ledger = recordingLedger();
  await ledger.topUp(ACCOUNT, amount);
  ledger.calls.length = 0;
  return ledger;
}

describe('row 10: credits held by authenticate', () => {
  it('holds the cost of a live key and returns the hold on the allow', async () => {
    const ledger = await funded(10);
    const result = await authenticate(live(), s.store, { credits: { ledger, cost: 3 } });
    expect(result).toMatchObject({ ok: true, status: 200, credits: { cost: 3, balance: 7 } });
    const holdId = (result as Extract<AuthResult, { ok: true }>).credits?.holdId as string;
    expect(await ledger.settle(holdId)).toEqual({ charged: 3, balance: 7 });
    expect((await ledger.entries(ACCOUNT))[0]).toMatchObject({ kind: 'charge', amount: -3, keyId: s.valid.key.id });
  });

  it('holds and settles through a memory ledger without a promise: a cached request stays synchronous', async () => {
    const ledger = recordingLedger();
    await ledger.topUp(ACCOUNT, 5);
    ledger.calls.length = 0;
    const options = { credits: { ledger, cost: 2 } };
    const cached = new CachedKeyStore(s.store);
    await authenticate(live(), cached); // the key is now in the cache
    const result = authenticateEager(live(), cached, options);
    expect('then' in result).toBe(false);
    expect(result).toMatchObject({ ok: true, credits: { cost: 2, balance: 3 } });
    void finishCredits(result as Extract<AuthResult, { ok: true }>, 200, options);
    expect(ledger.calls).toEqual(['holdSync', 'settleSync']);
    expect(await ledger.reconcile(ACCOUNT)).toMatchObject({ entries: 3, balance: 3, held: 0, ok: true });
  });

  it('never calls the ledger for a test key: the allow is unchanged, with no credits', async () => {
    const ledger = await funded(0 + 1);
    const result = await authenticate(test(), s.store, { credits: { ledger } });
    expect(result).toEqual(plainAllow(s.open.key.id));
    expect(ledger.calls).toEqual([]);
  });

  it('never calls the ledger for a request that costs 0', async () => {
    const ledger = await funded(1);
    const options = { credits: { ledger, cost: () => 0 } };
    expect(await authenticate(live(), s.store, options)).toEqual(plainAllow(s.valid.key.id));
    expect(ledger.calls).toEqual([]);
  });

  it('never calls the ledger for a request refused before row 10', async () => {
    const ledger = await funded(5);
    const result = await authenticate(live(), s.store, { permissions: ['admin'], credits: { ledger } });
    expect(result).toMatchObject({ status: 403, code: 'insufficient_permissions' });
    expect(ledger.calls).toEqual([]);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('no body');
      },
    ],
    ['returns a fraction', () => 1.5],
    ['returns a negative number', () => -1],
    ['returns a string', () => '2' as unknown as number],
    ['returns NaN', () => Number.NaN],
  ])('answers 500 invalid_credit_cost with nothing held when the cost function %s', async (_, cost) => {
    const ledger = await funded(10);
    const result = await authenticate(live(), s.store, { credits: { ledger, cost } });
    expect(result).toMatchObject({ ok: false, status: 500, code: 'invalid_credit_cost', key: { id: s.valid.key.id } });
    expect(ledger.calls).toEqual([]);
    expect(await ledger.balance(ACCOUNT)).toBe(10);
  });

  it('answers 402 insufficient_credits with the key when the balance cannot cover the cost, holding nothing', async () => {
    const ledger = await funded(2);
    const result = await authenticate(live(), s.store, { credits: { ledger, cost: 3 } });
    expect(result).toMatchObject({ ok: false, status: 402, code: 'insufficient_credits', key: { id: s.valid.key.id } });
    expect(await ledger.balance(ACCOUNT)).toBe(2);
    expect(await ledger.entries(ACCOUNT)).toHaveLength(1);
  });

  it('answers 503 credit_ledger_unavailable when the ledger fails (fail closed)', async () => {
    const result = await authenticate(live(), s.store, { credits: { ledger: failingLedger } });
    expect(result).toMatchObject({ ok: false, status: 503, code: 'credit_ledger_unavailable' });
  });

  it('answers 503 credit_ledger_unavailable when a ledger without a deadline hangs past timeoutMs', async () => {
    const result = await authenticate(live(), s.store, { timeoutMs: 30, credits: { ledger: hangingLedger } });
    expect(result).toMatchObject({ ok: false, status: 503, code: 'credit_ledger_unavailable' });
  });

  it('answers 503 when the ledger answers something that is not a hold', async () => {
    const ledger = { ...failingLedger, hold: async () => ({ ok: true }) as never };
    const result = await authenticate(live(), s.store, { credits: { ledger } });
    expect(result).toMatchObject({ status: 503, code: 'credit_ledger_unavailable' });
  });

  it("serves a failing ledger's request with onLedgerError 'allow', without credits, and emits credits.ledger_failed", async () => {
    const { hook, seen } = events();
    const credits = { ledger: failingLedger, onLedgerError: 'allow' as const, onEvent: hook };
    const result = await authenticate(live(), s.store, { credits });
    expect(result).toEqual(plainAllow(s.valid.key.id));
    expect(seen).toEqual([
      expect.objectContaining({
        type: 'credits.ledger_failed',
        operation: 'hold',
        served: true,
        keyId: s.valid.key.id,
        accountId: ACCOUNT,
        hint: s.valid.key.hint,
      }),
    ]);
    expect(JSON.stringify(seen)).not.toContain(s.valid.secret);
  });

  it('passes holdTtlMs to the ledger: an unsettled hold lapses after it', async () => {
    let now = 1_700_000_000_000;
    const ledger = new MemoryCreditLedger({ clock: () => now });
    await ledger.topUp(ACCOUNT, 5);
    const result = await authenticate(live(), s.store, { credits: { ledger, holdTtlMs: 1_000 } });
    expect(result).toMatchObject({ ok: true, credits: { balance: 4 } });
    now += 1_001;
    expect(await ledger.balance(ACCOUNT)).toBe(5);
  });
});

describe('credits events', () => {
  it('emits credits.low once when a hold crosses the threshold, and again after a top-up brings it back above', async () => {
    const ledger = await funded(12);
    const { hook, seen } = events();
    const options = { credits: { ledger, cost: 2, lowBalance: 8, onEvent: hook } };
    const balances: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await authenticate(live(), s.store, options);
      if (r.ok) balances.push(r.credits?.balance as number);
    }
    expect(balances).toEqual([10, 8, 6, 4]);
    expect(seen.map((e) => [e.type, e.balance, e.threshold])).toEqual([['credits.low', 6, 8]]);
    expect(seen[0]).toMatchObject({ keyId: s.valid.key.id, accountId: ACCOUNT, hint: s.valid.key.hint });
    await ledger.topUp(ACCOUNT, 10); // 14
    await authenticate(live(), s.store, options); // 12
    await authenticate(live(), s.store, options); // 10
    await authenticate(live(), s.store, options); // 8
    expect(seen).toHaveLength(1);
    await authenticate(live(), s.store, options); // 6: crosses again
    expect(seen.map((e) => [e.type, e.balance])).toEqual([
      ['credits.low', 6],
      ['credits.low', 6],
    ]);
  });

  it('reads the threshold per account from a lowBalance function', async () => {
    const ledger = await funded(3);
    const { hook, seen } = events();
    await authenticate(live(), s.store, {
      credits: { ledger, lowBalance: (a) => (a === ACCOUNT ? 3 : 0), onEvent: hook },
    });
    expect(seen).toMatchObject([{ type: 'credits.low', balance: 2, threshold: 3 }]);
  });

  it('emits credits.exhausted once per account until a hold of that account succeeds again', async () => {
    const ledger = new MemoryCreditLedger();
    const { hook, seen } = events();
    const options = { credits: { ledger, onEvent: hook } };
    for (let i = 0; i < 3; i++) expect(await authenticate(live(), s.store, options)).toMatchObject({ status: 402 });
    expect(seen).toMatchObject([{ type: 'credits.exhausted', accountId: ACCOUNT, balance: 0 }]);
    await ledger.topUp(ACCOUNT, 1);
    expect(await authenticate(live(), s.store, options)).toMatchObject({ ok: true });
    expect(await authenticate(live(), s.store, options)).toMatchObject({ status: 402 });
    expect(seen.map((e) => e.type)).toEqual(['credits.exhausted', 'credits.exhausted']);
  });

  it('never lets a throwing event hook change an outcome', async () => {
    const ledger = new MemoryCreditLedger();
    const onEvent = () => {
      throw new Error('hook down');
    };
    expect(await authenticate(live(), s.store, { credits: { ledger, onEvent } })).toMatchObject({ status: 402 });
  });
});

describe('finishCredits', () => {
  async function heldOne(ledger: CreditLedger, extra: object = {}) {
    const options = { credits: { ledger, cost: 2, ...extra } };
    const result = await authenticate(live(), s.store, options);
    if (!result.ok) throw new Error('expected an allow');
    return { result, options };
  }

  it('settles on a status below 500: one charge entry', async () => {
    const ledger = await funded(10);
    const { result, options } = await heldOne(ledger);
    await finishCredits(result, 404, options);
    expect(await ledger.balance(ACCOUNT)).toBe(8);
    expect((await ledger.entries(ACCOUNT)).map((e) => e.kind)).toEqual(['charge', 'top_up']);
  });

  it('releases on a 5xx: no entry, the balance restored', async () => {
    const ledger = await funded(10);
    const { result, options } = await heldOne(ledger);
    await finishCredits(result, 502, options);
    expect(await ledger.balance(ACCOUNT)).toBe(10);
    expect(await ledger.entries(ACCOUNT)).toHaveLength(1);
  });

  it('never rejects when the ledger fails: it emits credits.ledger_failed with the operation', async () => {
    const ledger = await funded(10);
    const { hook, seen } = events();
    const { result } = await heldOne(ledger);
    const broken = { credits: { ledger: failingLedger, onEvent: hook } };
    await expect(finishCredits(result, 200, broken)).resolves.toBeUndefined();
    await expect(finishCredits(result, 500, broken)).resolves.toBeUndefined();
    expect(seen.map((e) => [e.type, e.operation, e.served])).toEqual([
      ['credits.ledger_failed', 'settle', true],
      ['credits.ledger_failed', 'release', true],
    ]);
  });

  it('does nothing for a result without credits', async () => {
    const ledger = await funded(10);
    const result = await authenticate(test(), s.store, { credits: { ledger } });
    if (!result.ok) throw new Error('expected an allow');
    await finishCredits(result, 200, { credits: { ledger } });
    expect(ledger.calls).toEqual([]);
  });
});

describe('credits telemetry', () => {
  it('counts holds, refusals, settles, releases, lapses and errors in keygate.credits.operations', async () => {
    const sdk = memoryTelemetry();
    let now = 1_700_000_000_000;
    const ledger = new MemoryCreditLedger({ clock: () => now });
    await ledger.topUp(ACCOUNT, 3);
    const options = { telemetry: sdk.options, credits: { ledger, holdTtlMs: 1_000 } };
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await authenticate(live(), s.store, options));
    const [a, b, c, refused] = held;
    expect(refused).toMatchObject({ status: 402 });
    await finishCredits(a as never, 200, options);
    await finishCredits(b as never, 503, options);
    now += 1_001;
    await finishCredits(c as never, 200, options); // lapsed
    await authenticate(live(), s.store, { telemetry: sdk.options, credits: { ledger: failingLedger } });
    const count = (operation: string, extra: object = {}) =>
      sdk.total(METRICS.credits, { 'keygate.credits.operation': operation, ...extra });
    expect(await count('hold')).toBe(3);
    expect(await count('refused')).toBe(1);
    expect(await count('settle')).toBe(1);
    expect(await count('release')).toBe(1);
    expect(await count('lapse')).toBe(1);
    expect(await count('error', { 'keygate.credits.step': 'hold' })).toBe(1);
    expect(await sdk.total(METRICS.requests, { 'keygate.auth.code': 'insufficient_credits' })).toBe(1);
    const points = (await sdk.metrics()).get(METRICS.credits)?.points ?? [];
    expect(points.some((p) => 'keygate.account.id' in p.attributes)).toBe(false);
    await sdk.shutdown();
  });

  it('adds keygate.account.id only when attributes.accountId is on', async () => {
    const sdk = memoryTelemetry({ accountId: true });
    const ledger = await funded(1);
    await authenticate(live(), s.store, { telemetry: sdk.options, credits: { ledger } });
    expect(await sdk.total(METRICS.credits, { 'keygate.account.id': ACCOUNT })).toBe(1);
    await sdk.shutdown();
  });
});

describe('the credits option', () => {
  const ledger = new MemoryCreditLedger();
  it.each([
    ['not an object', 'credits', 5],
    ['a ledger without hold', 'credits.ledger', { ledger: {} }],
    ['no ledger', 'credits.ledger', { cost: 1 }],
    ['a negative cost', 'credits.cost', { ledger, cost: -1 }],
    ['a fractional cost', 'credits.cost', { ledger, cost: 0.5 }],
    ['a string cost', 'credits.cost', { ledger, cost: '1' }],
    ['a zero holdTtlMs', 'credits.holdTtlMs', { ledger, holdTtlMs: 0 }],
    ['a holdTtlMs over a day', 'credits.holdTtlMs', { ledger, holdTtlMs: 86_400_001 }],
    ['a negative lowBalance', 'credits.lowBalance', { ledger, lowBalance: -1 }],
    ['an unknown onLedgerError', 'credits.onLedgerError', { ledger, onLedgerError: 'fallback' }],
    ['an onEvent that is not a function', 'credits.onEvent', { ledger, onEvent: 'log' }],
    ['an unknown member', 'credits.ttlMs', { ledger, ttlMs: 5 }],
  ])('refuses %s, naming %s', async (_, field, credits) => {
    await expect(authenticate(live(), s.store, { credits: credits as never })).rejects.toMatchObject({
      code: 'invalid_input',
      field,
    });
  });

  it('accepts null as no billing', async () => {
    expect(await authenticate(live(), s.store, { credits: null })).toEqual(plainAllow(s.valid.key.id));
  });
});
