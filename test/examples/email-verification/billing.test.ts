// The example bills through keygate's credits: a live key's request holds items × price from the
// account before the handler runs; the answer settles it (below 500) or releases it (5xx). An account
// that cannot cover a request gets keygate's 402; a body that does not validate costs nothing; test
// keys never reach the ledger; the demo account's starting credits are credited once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { MxResolver } from '../../../examples/email-verification/mx.js';
import { DEMO_ACCOUNT, DEMO_TOP_UP } from '../../../examples/email-verification/server.js';
import { openStores } from '../../../examples/email-verification/stores.js';
import { ACCOUNT, BACKENDS, DEMO_CREDITS, PGLITE, PRICES, type Service, startMain, startService } from './service.js';

const emails = (n: number) => Array.from({ length: n }, (_, i) => `user${i}@example.com`);
const FIND = { domain: 'example.com', firstName: 'Ada', lastName: 'Lovelace' };

// A mail host the service cannot write into its answer: the work fails after the hold was taken.
const unwritable = {
  toLowerCase: () => ({
    toJSON() {
      throw new Error('the answer could not be written');
    },
  }),
};
const failingDns: MxResolver = {
  resolveMx: async () => [{ exchange: unwritable as unknown as string, priority: 10 }],
};

describe.each(BACKENDS)('billing on %s', PGLITE, (backend) => {
  let svc: Service | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });
  const start = async (credits: number, appOptions?: Parameters<typeof startService>[2]) => {
    svc = await startService(backend, credits, appOptions);
    return svc;
  };
  const verify = (s: Service, key: string) => s.post('/v1/email/verify', key, { email: 'ada@example.com' });
  // The hold is settled as the answer goes out: its charge entry may land just after the client has it.
  const charges = async (s: Service, count: number) => {
    await vi.waitFor(async () => expect(await s.ledger.entries(ACCOUNT, { limit: 1000 })).toHaveLength(count + 1));
    return (await s.ledger.entries(ACCOUNT, { limit: 1000 })).filter((e) => e.kind === 'charge');
  };

  it('charges a live key items × the price of the operation, and the answer says so', async () => {
    const s = await start(1000);
    const one = await verify(s, s.secrets.live);
    expect(one.status).toBe(200);
    expect(one.json.billing).toEqual({ charged: PRICES.verify, balance: 1000 - PRICES.verify });
    const find = await s.post('/v1/contacts/find', s.secrets.live, FIND);
    expect(find.json.billing).toEqual({ charged: PRICES.find, balance: 1000 - PRICES.verify - PRICES.find });
    const entries = await charges(s, 2);
    expect(entries.map((e) => e.amount)).toEqual([-PRICES.find, -PRICES.verify]);
    expect(await s.balance()).toBe(1000 - PRICES.verify - PRICES.find);
    const account = await s.call('GET', '/v1/account', s.secrets.live);
    expect(account.json.account).toMatchObject({ balance: 1000 - PRICES.verify - PRICES.find });
    expect(account.json.account.entries.map((e: { kind: string }) => e.kind)).toEqual(['charge', 'charge', 'top_up']);
  });

  it('charges a batch one price per address, in one charge entry', async () => {
    const s = await start(100);
    const res = await s.post('/v1/email/verify/batch', s.secrets.live, { emails: emails(7) });
    expect(res.status).toBe(200);
    expect(res.json.billing).toEqual({ charged: 7 * PRICES.verify, balance: 100 - 7 * PRICES.verify });
    expect(await charges(s, 1)).toEqual([expect.objectContaining({ kind: 'charge', amount: -7 * PRICES.verify })]);
  });

  it('charges every one of 50 concurrent live requests exactly once', async () => {
    const s = await start(1000);
    const results = await Promise.all(Array.from({ length: 50 }, () => verify(s, s.secrets.live)));
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(await s.balance()).toBe(1000 - 50 * PRICES.verify);
    expect(await charges(s, 50)).toHaveLength(50);
    // Every response saw a different balance: no two requests were held against the same credits.
    expect(new Set(results.map((r) => r.json.billing.balance)).size).toBe(50);
  });

  it('serves exactly 30 of 50 concurrent requests when the balance covers 30, and charges nothing for the rest', async () => {
    const s = await start(30 * PRICES.verify);
    const results = await Promise.all(Array.from({ length: 50 }, () => verify(s, s.secrets.live)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(30);
    expect(statuses.filter((x) => x === 402)).toHaveLength(20);
    expect(await s.balance()).toBe(0);
    expect(await charges(s, 30)).toHaveLength(30);
  });

  it("answers keygate's 402 problem+json once the balance is spent, and charges nothing for it", async () => {
    const s = await start(4);
    const short = await s.post('/v1/contacts/find', s.secrets.live, FIND); // costs 5
    expect(short.status).toBe(402);
    expect(short.type).toMatch(/^application\/problem\+json/);
    expect(short.json).toEqual({
      type: 'urn:keygate:problem:insufficient_credits',
      title: 'Insufficient credits',
      status: 402,
      detail: "The account's credit balance does not cover this request. Top up the account and retry.",
      code: 'insufficient_credits',
    });
    expect(await s.balance()).toBe(4);
    const tooMany = await s.post('/v1/email/verify/batch', s.secrets.live, { emails: emails(5) });
    expect(tooMany.status).toBe(402);
    expect((await s.post('/v1/email/verify/batch', s.secrets.live, { emails: emails(4) })).status).toBe(200);
    expect(await s.balance()).toBe(0);
    const spent = await verify(s, s.secrets.live);
    expect(spent.status).toBe(402);
    expect(spent.json.code).toBe('insufficient_credits');
    expect(await charges(s, 1)).toEqual([expect.objectContaining({ amount: -4 * PRICES.verify })]);
  });

  it('releases the hold of a request whose work fails: 500, and the credits come back', async () => {
    const failures: unknown[] = [];
    const s = await start(10, () => ({ resolver: failingDns, onError: (err) => failures.push(err) }));
    const res = await s.post('/v1/email/verify/batch', s.secrets.live, { emails: emails(3) });
    expect(res.status).toBe(500);
    expect(res.json).toMatchObject({ code: 'internal_error', detail: expect.stringContaining('not charged') });
    expect(failures).toHaveLength(1);
    await vi.waitFor(async () => expect(await s.balance()).toBe(10));
    expect(await s.ledger.entries(ACCOUNT)).toEqual([expect.objectContaining({ kind: 'top_up' })]);
  });

  it('a body that does not validate costs nothing, not even a hold: 400 on every billed route, on an empty balance', async () => {
    const s = await start(0);
    for (const [path, body] of [
      ['/v1/email/verify', { email: 42 }],
      ['/v1/email/score', {}],
      ['/v1/email/verify/batch', { emails: [] }],
      ['/v1/email/verify/batch', { emails: ['a@example.com', null] }],
      ['/v1/contacts/find', { domain: 'no_tld', firstName: 'Ada', lastName: 'L' }],
    ] as const) {
      const res = await s.post(path, s.secrets.live, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(res.json.code).toBe('invalid_request');
    }
    expect(await s.ledger.entries(ACCOUNT)).toEqual([]);
  });

  it('never bills test keys, even with an empty balance and 50 concurrent requests', async () => {
    const s = await start(0);
    const calls = Array.from({ length: 50 }, (_, i) =>
      i % 2 === 0
        ? verify(s, s.secrets.test)
        : s.post('/v1/email/verify/batch', s.secrets.test, {
            emails: ['deliverable@example.com', 'risky@example.com'],
          }),
    );
    const results = await Promise.all(calls);
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(results.map((r) => r.json.billing)).toEqual(Array(50).fill({ charged: 0 }));
    expect(await s.balance()).toBe(0);
    expect(await s.ledger.entries(ACCOUNT)).toEqual([]);
    expect((await verify(s, s.secrets.live)).status).toBe(402);
  });
});

describe('the demo account', PGLITE, () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('gets its starting credits once: a restart tops up nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keygate-email-billing-'));
    dirs.push(dir);
    for (let run = 0; run < 2; run++) {
      const s = await startMain(['--data-dir', dir]);
      try {
        expect(s.output).toContain(`Demo account ${DEMO_ACCOUNT}: ${DEMO_CREDITS} credits`);
      } finally {
        await s.close();
      }
    }
    const stores = await openStores({ dataDir: dir });
    try {
      expect(await stores.ledger.balance(DEMO_ACCOUNT)).toBe(DEMO_CREDITS);
      expect(await stores.ledger.entries(DEMO_ACCOUNT)).toEqual([
        expect.objectContaining({ kind: 'top_up', amount: DEMO_CREDITS, reference: DEMO_TOP_UP }),
      ]);
    } finally {
      await stores.close();
    }
  });
});
