import { authenticate, CreditLedgerUnavailableError, capabilityOf, KeyManager, MemoryKeyStore } from 'keygate';
import { finishCredits } from 'keygate/adapter-kit';
import { describeCreditLedgerContract } from 'keygate/testing';
import type { Miniflare } from 'miniflare';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DurableObjectCreditLedger } from '../../backends/cloudflare/durable-objects/index.js';
import { rejection } from '../rate-limit/support/rejection.js';
import { ledgerOn, namespaceOf, startObjects } from './support/objects.js';

let mf: Miniflare;
let accounts = 0;
const freshAccount = (label: string) => `acct_${label}_${process.pid}_${++accounts}`;
beforeAll(async () => {
  mf = await startObjects();
});
afterAll(() => mf?.dispose());

// Two clients of one namespace, as two isolates would hold it; concurrent calls are spread over both.
// Each call crosses from Node into workerd through Miniflare's proxy (tens of ms), so the hold the
// suite lets lapse lives 2 s: long enough to outlast the calls the suite makes before it checks it.
describeCreditLedgerContract(
  'DurableObjectCreditLedger on workerd (SQLite-backed objects, two clients)',
  async () => ({ ledger: await ledgerOn(mf), peer: await ledgerOn(mf) }),
  { describe, it, expect, beforeEach, afterEach },
  // Each object prunes its own closed holds: the client's `prune` reaches none.
  { lapseMs: 2_000, prunesClosedHolds: false },
);

describe('DurableObjectCreditLedger', () => {
  it("names the account's object in a hold id, so that another client settles it without the account", async () => {
    const [a, b] = [await ledgerOn(mf), await ledgerOn(mf)];
    const account = freshAccount('route');
    await a.topUp(account, 10);
    const held = await a.hold(account, 4, { keyId: 'key_1' });
    if (!held.ok) throw new Error('hold refused');
    const objectId = (await namespaceOf(mf, 'KEYGATE_CREDITS')).idFromName(account).toString();
    expect(held.holdId.endsWith(`_${objectId}`)).toBe(true);
    expect(await b.settle(held.holdId, 3)).toEqual({ charged: 3, balance: 7 });
    expect(await b.entries(account, { limit: 1 })).toMatchObject([{ kind: 'charge', amount: -3, keyId: 'key_1' }]);
  });

  it('answers a hold id naming no object of the namespace as an unknown hold, changing nothing', async () => {
    const ledger = await ledgerOn(mf);
    const forged = `hold_${'0'.repeat(32)}_${'f'.repeat(64)}`;
    expect(await ledger.settle(forged)).toEqual({ charged: 0, balance: 0 });
    expect(await ledger.release(forged)).toEqual({ balance: 0 });
  });

  it('bills through authenticate and finishCredits, and refuses 402 past the balance', async () => {
    const ledger = await ledgerOn(mf);
    const account = freshAccount('auth');
    await ledger.topUp(account, 2);
    const store = new MemoryKeyStore();
    const { secret } = await new KeyManager({ store }).create({ accountId: account, name: 'k', mode: 'live' });
    const options = { credits: { ledger, cost: 1 } };
    const statuses: (string | number)[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await authenticate({ headers: { 'x-api-key': secret } }, store, options);
      if (result.ok) await finishCredits(result, 200, options);
      statuses.push(result.ok ? result.status : result.code);
    }
    expect(statuses).toEqual([200, 200, 'insufficient_credits']);
    expect(await ledger.reconcile(account)).toMatchObject({ entries: 0, balance: 0, held: 0, ok: true });
  });

  it('declares its timeoutMs (1000 by default) as its deadline, and offers no synchronous capability', async () => {
    const ledger = new DurableObjectCreditLedger({ namespace: await namespaceOf(mf, 'KEYGATE_CREDITS') });
    expect(capabilityOf(ledger, 'deadline')?.timeoutMs).toBe(1_000);
    expect(capabilityOf(ledger, 'synchronous')).toBeUndefined();
  });

  it('rejects with credit_ledger_unavailable when its object does not answer within timeoutMs', async () => {
    const ledger = new DurableObjectCreditLedger({ namespace: await namespaceOf(mf, 'STUCK'), timeoutMs: 200 });
    expect(await rejection(ledger.hold(freshAccount('stuck'), 1))).toBeInstanceOf(CreditLedgerUnavailableError);
    expect(await rejection(ledger.balance(freshAccount('stuck')))).toBeInstanceOf(CreditLedgerUnavailableError);
  });

  it('fails closed, 503 through authenticate, when the object class is not SQLite-backed', async () => {
    const plain = await startObjects({ useSQLite: false });
    try {
      const ledger = await ledgerOn(plain);
      const account = freshAccount('kv');
      const err = await rejection(ledger.topUp(account, 5));
      expect(err).toBeInstanceOf(CreditLedgerUnavailableError);
      expect(String((err.cause as Error).message)).toMatch(/new_sqlite_classes/);
      const store = new MemoryKeyStore();
      const { secret } = await new KeyManager({ store }).create({ accountId: account, name: 'k', mode: 'live' });
      const result = await authenticate({ headers: { 'x-api-key': secret } }, store, { credits: { ledger } });
      expect(result).toMatchObject({ ok: false, status: 503, code: 'credit_ledger_unavailable' });
    } finally {
      await plain.dispose();
    }
  });

  it('prunes its own closed holds after the pruneHoldsAfterMs its class gives, keeping open holds and entries', async () => {
    const namespace = await namespaceOf(mf, 'KEYGATE_CREDITS_PRUNING');
    const ledger = new DurableObjectCreditLedger({ namespace, timeoutMs: 10_000 });
    const account = freshAccount('pruning');
    // What the account's object stores for a hold, read around the ledger (`null`: nothing).
    const stateOf = async (holdId: string) => {
      const [, inner, objectHex] = /^(hold_[0-9a-f]{32})_([0-9a-f]{64})$/.exec(holdId) ?? [];
      const stub = namespace.get(namespace.idFromString(String(objectHex)));
      const res = await stub.fetch('https://keygate.do/holdState', {
        method: 'POST',
        body: JSON.stringify({ args: [inner] }),
      });
      return ((await res.json()) as { value: string | null }).value;
    };
    await ledger.topUp(account, 100);
    const settled = await ledger.hold(account, 4, { keyId: 'key_1' });
    const open = await ledger.hold(account, 5, { ttlMs: 60_000 });
    if (!settled.ok || !open.ok) throw new Error('hold refused');
    await ledger.settle(settled.holdId);
    expect(await stateOf(settled.holdId)).toBe('settled');
    // The account bills on; the object prunes after a hold, once the settled one is 300 ms old.
    const bill = async () => {
      const held = await ledger.hold(account, 1);
      if (held.ok) await ledger.release(held.holdId);
      return stateOf(settled.holdId);
    };
    let state = await bill();
    for (const until = Date.now() + 5_000; state !== null && Date.now() < until; state = await bill()) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(state).toBe(null);
    expect(await stateOf(open.holdId)).toBe('open');
    expect(await ledger.settle(settled.holdId)).toEqual({ charged: 0, balance: 0 });
    expect((await ledger.entries(account)).map((e) => e.amount)).toEqual([-4, 100]);
    expect(await ledger.reconcile(account)).toMatchObject({ entries: 96, balance: 91, held: 5, ok: true });
    expect(await ledger.prune({ olderThanMs: 0 })).toEqual({ deleted: 0 });
  });

  it('refuses a namespace that is not a binding as invalid_input naming namespace', () => {
    expect(() => new DurableObjectCreditLedger({ namespace: null as never })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'namespace' }),
    );
  });
});
