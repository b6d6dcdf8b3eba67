import { afterEach, describe, expect, it } from 'vitest';
import { BACKENDS, PGLITE, PRICES, type Service, startService } from './service.js';

describe.each(BACKENDS)('billing on %s', PGLITE, (backend) => {
  let svc: Service | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });
  const start = async (credits: number) => {
    svc = await startService(backend, credits);
    return svc;
  };
  const verify = (s: Service, key: string) => s.post('/v1/email/verify', key, { email: 'ada@example.com' });

  it('debits every one of 50 concurrent live requests exactly once', async () => {
    const s = await start(1000);
    const results = await Promise.all(Array.from({ length: 50 }, () => verify(s, s.secrets.live)));
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(await s.balance()).toBe(1000 - 50 * PRICES.verify);
    const charges = await s.ledger.charges('acct_test', 100);
    expect(charges).toHaveLength(50);
    // Every response saw a different balance: no two requests were charged against the same credits.
    expect(new Set(results.map((r) => r.json.billing.balance)).size).toBe(50);
  });

  it('serves exactly 30 of 50 concurrent requests when the balance covers 30, and charges nothing for the rest', async () => {
    const s = await start(30 * PRICES.verify);
    const results = await Promise.all(Array.from({ length: 50 }, () => verify(s, s.secrets.live)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(30);
    expect(statuses.filter((x) => x === 402)).toHaveLength(20);
    expect(await s.balance()).toBe(0);
    expect(await s.ledger.charges('acct_test', 100)).toHaveLength(30);
  });

  it('answers 402 problem+json with the cost and balance when the balance is short', async () => {
    const s = await start(4);
    const res = await s.post('/v1/contacts/find', s.secrets.live, {
      domain: 'example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    expect(res.status).toBe(402);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(res.json).toMatchObject({ status: 402, code: 'insufficient_credits', required: 5, balance: 4 });
    expect(await s.balance()).toBe(4);
    expect((await verify(s, s.secrets.live)).status).toBe(200);
    expect(await s.balance()).toBe(3);
  });

  it('charges a batch all or nothing', async () => {
    const s = await start(5);
    const emails = (n: number) => Array.from({ length: n }, (_, i) => `user${i}@example.com`);
    const tooMany = await s.post('/v1/email/verify/batch', s.secrets.live, { emails: emails(6) });
    expect(tooMany.status).toBe(402);
    expect(tooMany.json).toMatchObject({ required: 6, balance: 5 });
    expect(await s.balance()).toBe(5);
    const enough = await s.post('/v1/email/verify/batch', s.secrets.live, { emails: emails(5) });
    expect(enough.status).toBe(200);
    expect(enough.json.count).toBe(5);
    expect(await s.balance()).toBe(0);
    expect(await s.ledger.charges('acct_test')).toEqual([
      expect.objectContaining({ operation: 'verify', items: 5, credits: 5 }),
    ]);
  });

  it('never debits test keys, even with an empty balance and 50 concurrent requests', async () => {
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
    expect(await s.balance()).toBe(0);
    expect(await s.ledger.charges('acct_test')).toEqual([]);
    expect((await verify(s, s.secrets.live)).status).toBe(402);
  });
});
