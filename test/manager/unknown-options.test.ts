// Every options object and input of the root export refuses a member it does not know, at
// construction or at the call that writes, with the member named, reason `unknown_option`, and the
// nearest known name: a misspelt option never leaves a check off, and nothing is written.
import {
  CachedKeyStore,
  FailedAttemptThrottle,
  generateKey,
  KeyManager,
  LeasableMemoryRateLimiter,
  LeasedCreditLedger,
  LeasedRateLimiter,
  MemoryCreditLedger,
  MemoryKeyStore,
  MemoryRateLimiter,
  UsageRecorder,
} from 'keygate';
import { describe, expect, it } from 'vitest';

const base = { accountId: 'acct_1', name: 'ci', mode: 'test' as const };

function setup() {
  const store = new MemoryKeyStore();
  return { store, keys: new KeyManager({ store }) };
}

// What a refusal of `field` looks like: `suggestion` is the nearest known name.
function refusal(field: string, suggestion: string) {
  return {
    code: 'invalid_input',
    field,
    message: expect.stringContaining(`did you mean \`${suggestion}\`?`),
    issues: [expect.objectContaining({ field, reason: 'unknown_option' })],
  };
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

const store = () => new MemoryKeyStore();
const telemetryMeter = { createCounter: () => ({ add() {} }), createHistogram: () => ({ record() {} }) };

/** Constructors and functions that take options: [what, call, misspelt member, suggestion]. */
const CONSTRUCTED: Array<[string, () => unknown, string, string]> = [
  ['CachedKeyStore', () => new CachedKeyStore(store(), { ttl: 30_000 } as never), 'ttl', 'ttlMs'],
  [
    'CachedKeyStore telemetry',
    () => new CachedKeyStore(store(), { telemetry: { metre: telemetryMeter } } as never),
    'telemetry.metre',
    'meter',
  ],
  [
    'CachedKeyStore telemetry attributes',
    () => new CachedKeyStore(store(), { telemetry: { meter: telemetryMeter, attributes: { keyid: true } } } as never),
    'telemetry.attributes.keyid',
    'keyId',
  ],
  ['KeyManager', () => new KeyManager({ store: store(), peper: 'x' } as never), 'peper', 'pepper'],
  ['MemoryKeyStore', () => new MemoryKeyStore({ outbx: undefined } as never), 'outbx', 'outbox'],
  ['MemoryRateLimiter', () => new MemoryRateLimiter({ maxx: 10 } as never), 'maxx', 'max'],
  ['LeasableMemoryRateLimiter', () => new LeasableMemoryRateLimiter({ clok: Date.now } as never), 'clok', 'clock'],
  ['MemoryCreditLedger', () => new MemoryCreditLedger({ clok: Date.now } as never), 'clok', 'clock'],
  [
    'LeasedRateLimiter',
    () => new LeasedRateLimiter({ limiter: new LeasableMemoryRateLimiter(), maxSlices: 10 } as never),
    'maxSlices',
    'maxSlice',
  ],
  [
    'LeasedCreditLedger',
    () => new LeasedCreditLedger({ ledger: new MemoryCreditLedger(), sliceTtl: 60_000 } as never),
    'sliceTtl',
    'sliceTtlMs',
  ],
  ['FailedAttemptThrottle', () => new FailedAttemptThrottle({ window: 1_000 } as never), 'window', 'windowMs'],
  ['UsageRecorder', () => new UsageRecorder({ store: store(), interval: 0 } as never), 'interval', 'intervalMs'],
  [
    'UsageRecorder spike',
    () => new UsageRecorder({ store: store(), intervalMs: 0, spike: { factr: 3 } } as never),
    'spike.factr',
    'factor',
  ],
  ['generateKey', () => generateKey({ mod: 'live' } as never), 'mod', 'mode'],
  ['KeyManager.check', () => KeyManager.check(base, { partal: true } as never), 'partal', 'partial'],
];

describe('an options object with a misspelt member', () => {
  it.each(CONSTRUCTED)('%s refuses it, naming the member and the nearest option', (_, run, field, suggestion) => {
    expect(thrown(run)).toMatchObject(refusal(field, suggestion));
  });

  it('a CachedKeyStore with `ttl` is refused, so no cache is ever built with the default 30 s', () => {
    const error = thrown(() => new CachedKeyStore(store(), { ttl: 1_000 } as never)) as Error;
    expect(error.message).toBe('ttl is not an option of CachedKeyStore; did you mean `ttlMs`?');
  });
});

/** Manager calls that write, each with a misspelt member: [what, call, field, suggestion]. */
const WRITES: Array<[string, (keys: KeyManager, id: string) => Promise<unknown>, string, string]> = [
  ['create input', (k) => k.create({ ...base, allowIps: ['203.0.113.0/24'] } as never), 'allowIps', 'allowedIps'],
  ['create options', (k) => k.create(base, { acter: { type: 'cli' } } as never), 'acter', 'actor'],
  [
    'import input',
    (k) => k.import({ ...base, secret: generateKey(), allowIps: ['203.0.113.0/24'] } as never),
    'allowIps',
    'allowedIps',
  ],
  ['update input', (k, id) => k.update(id, { allowIps: ['203.0.113.0/24'] } as never), 'allowIps', 'allowedIps'],
  ['update options', (k, id) => k.update(id, { name: 'x' }, { adress: '203.0.113.9' } as never), 'adress', 'address'],
  ['rotate options', (k, id) => k.rotate(id, { grace: 0 } as never), 'grace', 'graceMs'],
  ['suspend options', (k, id) => k.suspend(id, { reasn: 'leaked' } as never), 'reasn', 'reason'],
  ['resume options', (k, id) => k.resume(id, { acter: { type: 'cli' } } as never), 'acter', 'actor'],
  ['revoke options', (k, id) => k.revoke(id, { quietFor: 60_000 } as never), 'quietFor', 'quietForMs'],
  ['list options', (k) => k.list('acct_1', { unusedFor: 1_000 } as never), 'unusedFor', 'unusedForMs'],
  ['usage range', (k, id) => k.usage(id, { form: '2026-01-01' } as never), 'range.form', 'from'],
  ['rotationStatus options', (k, id) => k.rotationStatus(id, { quietFor: 1 } as never), 'quietFor', 'quietForMs'],
  ['audit query', (k) => k.audit({ accountId: 'acct_1', limt: 5 } as never), 'limt', 'limit'],
  [
    'recordAudit input',
    (k) => k.recordAudit({ accountId: 'acct_1', action: 'dashboard.signed_in', keyid: 'key_1' } as never),
    'input.keyid',
    'keyId',
  ],
];

describe('a KeyManager call with a misspelt member', () => {
  it.each(WRITES)(
    '%s is refused, naming the member and the nearest name; nothing is written',
    async (_, call, field, suggestion) => {
      const { store, keys } = setup();
      const { key } = await keys.create(base);
      const before = await store.findById(key.id);
      const entries = await keys.audit({ accountId: 'acct_1' });
      await expect(call(keys, key.id)).rejects.toMatchObject(refusal(field, suggestion));
      expect(await store.listByAccount('acct_1')).toHaveLength(1);
      expect(await store.findById(key.id)).toBe(before);
      expect(await keys.audit({ accountId: 'acct_1' })).toHaveLength(entries.length);
    },
  );

  it('create with `allowIps` makes no key: the store still has none, and the address check never went off', async () => {
    const { store, keys } = setup();
    await expect(keys.create({ ...base, allowIps: ['203.0.113.0/24'] } as never)).rejects.toMatchObject(
      refusal('allowIps', 'allowedIps'),
    );
    expect(await store.listByAccount('acct_1')).toEqual([]);
  });

  it("a named rate limit's `windowms` is refused as such, naming `windowMs`", async () => {
    const { store, keys } = setup();
    const rateLimit = [{ name: 'burst', limit: 10, windowms: 1_000 }];
    await expect(keys.create({ ...base, rateLimit } as never)).rejects.toMatchObject(
      refusal('rateLimit[0].windowms', 'windowMs'),
    );
    await expect(keys.create({ ...base, rateLimit: { limit: 10, windowms: 1_000 } } as never)).rejects.toMatchObject(
      refusal('rateLimit.windowms', 'windowMs'),
    );
    expect(await store.listByAccount('acct_1')).toEqual([]);
  });

  it('KeyManager.check reports an unknown field as an issue, beside the other issues, without throwing', () => {
    const checked = KeyManager.check({ ...base, name: '', allowIps: ['10.0.0.0/8'] });
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.issues).toEqual([
      expect.objectContaining({
        field: 'allowIps',
        reason: 'unknown_option',
        message: expect.stringContaining('`allowedIps`'),
      }),
      expect.objectContaining({ field: 'name', reason: 'empty' }),
    ]);
  });

  it('update still says a key field that cannot change is not_allowed', async () => {
    const { keys } = setup();
    const { key } = await keys.create(base);
    await expect(keys.update(key.id, { mode: 'live' } as never)).rejects.toMatchObject({
      field: 'mode',
      issues: [expect.objectContaining({ reason: 'not_allowed' })],
    });
  });
});

describe('a credit ledger or limiter call with a misspelt option', () => {
  it.each([
    ['hold', (l: MemoryCreditLedger) => l.hold('acct_1', 1, { ttl: 1_000 } as never), 'ttl', 'ttlMs'],
    ['topUp', (l: MemoryCreditLedger) => l.topUp('acct_1', 1, { referense: 'p' } as never), 'referense', 'reference'],
    ['entries', (l: MemoryCreditLedger) => l.entries('acct_1', { limt: 1 } as never), 'limt', 'limit'],
  ])('MemoryCreditLedger.%s refuses it; the balance is unchanged', async (_, call, field, suggestion) => {
    const ledger = new MemoryCreditLedger();
    await ledger.topUp('acct_1', 100);
    await expect(call(ledger)).rejects.toMatchObject(refusal(field, suggestion));
    expect(await ledger.balance('acct_1')).toBe(100);
  });
});
