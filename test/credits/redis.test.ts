import { createHash } from 'node:crypto';
import { RedisCreditLedger } from 'keygate/redis';
import { describeCreditLedgerContract } from 'keygate/testing';
import { createClient as createClient6 } from 'redis';
import { createClient as createClient4 } from 'redis4';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { rejectedWith, settlesAt } from '../rate-limit/support/deadline.js';
import { rejection } from '../rate-limit/support/rejection.js';
import { REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const available = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const PREFIX = `keygate:test:${RUN_ID}:credits:`;

/** What these tests need of a node-redis client, whichever major it is. */
interface TestClient {
  sendCommand(args: string[]): Promise<unknown>;
  connect(): Promise<unknown>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

interface Flavour {
  name: string;
  /** A client, not yet connected, and the way this major closes one at once. */
  create(): { client: TestClient; end(): Promise<unknown> };
}

// The newest major (the main devDependency) and the oldest the peer range allows (`redis4` alias).
const FLAVOURS: Flavour[] = [
  {
    name: 'node-redis 6',
    create() {
      const client = createClient6({ url: REDIS_URL });
      return { client, end: async () => client.destroy() };
    },
  },
  {
    name: 'node-redis 4.6',
    create() {
      const client = createClient4({ url: REDIS_URL });
      return { client, end: () => client.disconnect() };
    },
  },
];
const ends: (() => Promise<unknown>)[] = [];

async function connected(flavour: Flavour = FLAVOURS[0] as Flavour): Promise<TestClient> {
  const { client, end } = flavour.create();
  // A dropped connection is reported here; node-redis reconnects by itself.
  client.on('error', () => {});
  ends.push(() => end().catch(() => {}));
  await client.connect();
  return client;
}

afterAll(async () => {
  if (!available) return;
  const admin = await connected();
  const keys = (await admin.sendCommand(['KEYS', `${PREFIX}*`])) as string[];
  for (let i = 0; i < keys.length; i += 500) await admin.sendCommand(['DEL', ...keys.slice(i, i + 500)]);
  for (const end of ends) await end();
});

let accounts = 0;
const freshAccount = (label: string) => `acct_${label}_${RUN_ID}_${++accounts}`;
const tagOf = (accountId: string) => createHash('sha256').update(accountId).digest('base64url');

describe.skipIf(!available).each(FLAVOURS)('RedisCreditLedger on $name', (flavour) => {
  // Two connections, as two processes would hold them; each test's ledgers are cheap.
  let connections: [TestClient, TestClient] | undefined;
  describeCreditLedgerContract(
    'RedisCreditLedger',
    async () => {
      connections ??= [await connected(flavour), await connected(flavour)];
      const [one, two] = connections;
      return {
        ledger: new RedisCreditLedger({ client: one, prefix: PREFIX, timeoutMs: 10_000 }),
        peer: new RedisCreditLedger({ client: two, prefix: PREFIX, timeoutMs: 10_000 }),
        writeAround: async (accountId, amount) => {
          const at = String(Date.now());
          const entry = JSON.stringify({ id: 'ce_x', kind: 'top_up', amount: String(amount), balance: '0', at });
          await one.sendCommand(['LPUSH', `${PREFIX}{${tagOf(accountId)}}:entries`, entry]);
        },
        stalled: (timeoutMs) => {
          let fail: (err: Error) => void = () => {};
          const silent = { sendCommand: () => new Promise<unknown>((_, reject) => (fail = reject)) };
          return { ledger: new RedisCreditLedger({ client: silent, timeoutMs }), unstick: (err) => fail(err) };
        },
        ended: async () => {
          const { client, end } = flavour.create();
          client.on('error', () => {});
          await client.connect();
          const ledger = new RedisCreditLedger({ client, prefix: PREFIX });
          await ledger.balance(freshAccount('closed'));
          await end();
          return ledger;
        },
      };
    },
    { describe, it, expect, beforeEach, afterEach },
    // A hold's keys go when it closes: `prune` finds nothing to delete.
    { hooks: ['writeAround', 'stalled', 'ended'], prunesClosedHolds: false },
  );
});

describe.skipIf(!available)('RedisCreditLedger', () => {
  const client = () => connected();

  /** A client that counts the commands it sends. */
  async function counting() {
    const redis = await client();
    const counter = {
      commands: 0,
      sendCommand: (args: string[]) => {
        counter.commands++;
        return redis.sendCommand(args);
      },
    };
    return counter;
  }

  it('keeps every key of an account under one hash tag, the SHA-256 of its id, which its hold ids carry', async () => {
    const redis = await client();
    const prefix = `${PREFIX}tag${++accounts}:`;
    const ledger = new RedisCreditLedger({ client: redis, prefix });
    const accountId = `acct_{brace}_${RUN_ID}`;
    await ledger.topUp(accountId, 10, { reference: 'pay_1' });
    const held = await ledger.hold(accountId, 3, { keyId: 'key_1' });
    await ledger.settle(held.ok ? held.holdId : '', 1);
    await ledger.hold(accountId, 2);
    const tag = tagOf(accountId);
    const keys = ((await redis.sendCommand(['KEYS', `${prefix}*`])) as string[]).sort();
    expect(keys).toEqual(['available', 'entries', 'held', 'holds', 'refs'].map((part) => `${prefix}{${tag}}:${part}`));
    expect(held.ok && held.holdId).toMatch(new RegExp(`^hold_${tag}\\.[0-9a-f]{24}$`));
  });

  it('gives 200 concurrent holds of two ledgers distinct ids, and their charges distinct entry ids', async () => {
    const accountId = freshAccount('ids');
    const ledgers = [
      new RedisCreditLedger({ client: await client(), prefix: PREFIX }),
      new RedisCreditLedger({ client: await client(), prefix: PREFIX }),
    ];
    await ledgers[0]?.topUp(accountId, 1_000);
    const holds = await Promise.all(Array.from({ length: 200 }, (_, i) => ledgers[i % 2]?.hold(accountId, 1)));
    const ids = holds.map((held) => (held?.ok ? held.holdId : ''));
    expect(new Set(ids).size).toBe(200);
    for (const id of ids) expect(id).toMatch(new RegExp(`^hold_${tagOf(accountId)}\\.[0-9a-f]{24}$`));
    await Promise.all(ids.map((id, i) => ledgers[i % 2]?.settle(id)));
    const entries = await ledgers[1]?.entries(accountId, { limit: 1_000 });
    expect(entries?.filter((e) => e.kind === 'charge')).toHaveLength(200);
    expect(new Set(entries?.map((e) => e.id)).size).toBe(201);
    expect(await ledgers[0]?.balance(accountId)).toBe(800);
  });

  it('sums every entry, past the 1,000 a script reads at a time, exactly up to 2**53 - 1', async () => {
    const redis = await client();
    const ledger = new RedisCreditLedger({ client: redis, prefix: PREFIX, timeoutMs: 10_000 });
    const account = freshAccount('big');
    await ledger.topUp(account, Number.MAX_SAFE_INTEGER - 2_500);
    await Promise.all(Array.from({ length: 2_500 }, () => ledger.topUp(account, 1)));
    const held = await ledger.hold(account, 7);
    await ledger.settle(held.ok ? held.holdId : '', 2);
    expect(await ledger.reconcile(account)).toEqual({
      accountId: account,
      entries: Number.MAX_SAFE_INTEGER - 2,
      balance: Number.MAX_SAFE_INTEGER - 2,
      held: 0,
      ok: true,
    });
  }, 60_000);

  it('times holds and stamps entries by the server’s clock, not the process’s', async () => {
    const ledger = new RedisCreditLedger({ client: await client(), prefix: PREFIX });
    const account = freshAccount('clock');
    const realNow = Date.now();
    // This process's clock runs an hour behind: an expiry computed from it would lapse a minute's hold at once.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(realNow - 3_600_000);
      await ledger.topUp(account, 10);
      const held = await ledger.hold(account, 4, { ttlMs: 60_000 });
      expect(await ledger.balance(account)).toBe(6);
      expect(await ledger.settle(held.ok ? held.holdId : '')).toEqual({ charged: 4, balance: 6 });
    } finally {
      vi.useRealTimers();
    }
    for (const entry of await ledger.entries(account)) {
      expect(Math.abs(Date.parse(entry.createdAt) - realNow)).toBeLessThan(60_000);
    }
  });

  it('answers each call in one command once its scripts are loaded', async () => {
    const counter = await counting();
    const ledger = new RedisCreditLedger({ client: counter, prefix: PREFIX });
    const account = freshAccount('trips');
    const round = async () => {
      await ledger.topUp(account, 5);
      const held = await ledger.hold(account, 2);
      await ledger.settle(held.ok ? held.holdId : '');
      const again = await ledger.hold(account, 1);
      await ledger.release(again.ok ? again.holdId : '');
      await ledger.balance(account);
      await ledger.entries(account);
    };
    await round(); // SCRIPT LOAD once per script, then EVALSHA
    counter.commands = 0;
    await round();
    expect(counter.commands).toBe(7);
  });

  it('reloads its scripts after the server forgot them (SCRIPT FLUSH)', async () => {
    const redis = await client();
    const ledger = new RedisCreditLedger({ client: redis, prefix: PREFIX });
    const account = freshAccount('flush');
    await ledger.topUp(account, 5);
    await redis.sendCommand(['SCRIPT', 'FLUSH']);
    expect(await ledger.topUp(account, 5)).toEqual({ balance: 10 });
  });

  it('sends nothing for a refused amount, nor for a hold id it cannot have made', async () => {
    const counter = await counting();
    const ledger = new RedisCreditLedger({ client: counter, prefix: PREFIX });
    const account = freshAccount('nothing_sent');
    for (const call of [
      () => ledger.topUp(account, -1),
      () => ledger.hold(account, 0.5),
      () => ledger.settle(`hold_${tagOf(account)}.${'0'.repeat(24)}`, 2 ** 53),
    ]) {
      expect(await rejection(call())).toMatchObject({ code: 'invalid_input', field: 'amount' });
    }
    expect(await ledger.settle('hold_1')).toEqual({ charged: 0, balance: 0 });
    expect(await ledger.release(`hold_${tagOf(account)}`)).toEqual({ balance: 0 });
    expect(counter.commands).toBe(0);
  });

  it('keeps balances exact up to 2**53 - 1 and refuses a top-up past it, changing nothing', async () => {
    const ledger = new RedisCreditLedger({ client: await client(), prefix: PREFIX });
    const account = freshAccount('big');
    const most = Number.MAX_SAFE_INTEGER;
    expect(await ledger.topUp(account, most - 1)).toEqual({ balance: most - 1 });
    expect(await ledger.topUp(account, 1)).toEqual({ balance: most });
    expect(await rejection(ledger.topUp(account, 1, { reference: 'pay_over' }))).toMatchObject({
      code: 'invalid_input',
      field: 'amount',
    });
    const held = await ledger.hold(account, most - 2);
    expect(held).toMatchObject({ ok: true, balance: 2 });
    expect(await ledger.settle(held.ok ? held.holdId : '', most - 3)).toEqual({ charged: most - 3, balance: 3 });
    const entries = await ledger.entries(account);
    expect(entries.map((e) => [e.amount, e.balance])).toEqual([
      [-(most - 3), 3],
      [1, most],
      [most - 1, most - 1],
    ]);
    // The refused top-up did not use its reference.
    expect(await ledger.topUp(account, 1, { reference: 'pay_over' })).toEqual({ balance: 4 });
  });

  it('rejects at its timeout (default 1,000 ms) when Redis never answers, and absorbs the late failure', async () => {
    let fail: (err: Error) => void = () => {};
    const silent = { sendCommand: () => new Promise<unknown>((_, reject) => (fail = reject)) };
    const ledger = new RedisCreditLedger({ client: silent });
    expect(ledger.timeoutMs).toBe(1000);
    // Fake timers: still pending at 999 ms, rejected by 1,001 ms, whatever the machine's speed.
    const holdId = `hold_${tagOf('acct_1')}.${'0'.repeat(24)}`;
    const err = rejectedWith(await settlesAt(1000, () => ledger.release(holdId)));
    expect(err).toMatchObject({ code: 'credit_ledger_unavailable' });
    expect(String((err.cause as Error).message)).toMatch(/timed out after 1000 ms/);
    fail(new Error('connection reset'));
    await new Promise((resolve) => setTimeout(resolve, 20));
  });

  it.each([
    ['client', { client: {} }],
    ['prefix', { prefix: 'credit ledger:' }],
    ['timeoutMs', { timeoutMs: 0 }],
    ['timeoutMs', { timeoutMs: Number.POSITIVE_INFINITY }],
  ])('refuses a bad %s option at construction', async (field, options) => {
    const redis = await client();
    expect(() => new RedisCreditLedger({ client: redis, ...options } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});
