import { PGlite } from '@electric-sql/pglite';
import { capabilityOf } from 'keygate';
import { PostgresCreditLedger } from 'keygate/postgres';
import { describeCreditLedgerContract } from 'keygate/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rejection } from '../rate-limit/support/rejection.js';
import { PG_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const available = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const SCHEMA = `keygate_cl${RUN_ID}`;
const pools: pg.Pool[] = [];
let accounts = 0;
const freshAccount = (label: string) => `acct_${label}_${RUN_ID}_${++accounts}`;

function pool(): pg.Pool {
  const p = new pg.Pool({ connectionString: PG_URL, max: 10 });
  p.on('error', () => {});
  pools.push(p);
  return p;
}

// PGlite takes about a second to start: one in-memory database for the file, a schema per use.
let pglite: Promise<PGlite> | undefined;
const embedded = () => {
  pglite ??= PGlite.create();
  return pglite;
};
beforeAll(async () => {
  await new PostgresCreditLedger({ client: await embedded(), schema: 'credits' }).migrate();
});

afterAll(async () => {
  if (pglite) await (await pglite).close();
  if (!available) return;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
  await Promise.all(pools.filter((p) => !p.ended).map((p) => p.end()));
});

/** A pg Pool whose connections and queries never settle, until `unstick` fails the connection it waits for. */
function stalled(timeoutMs: number) {
  let fail: (err: Error) => void = () => {};
  const stuck = {
    totalCount: 0,
    connect: () => new Promise((_, reject) => (fail = reject)),
    query: () => new Promise(() => {}),
  } as unknown as pg.Pool;
  return { ledger: new PostgresCreditLedger({ client: stuck, timeoutMs }), unstick: (err: Error) => fail(err) };
}

describeCreditLedgerContract(
  'PostgresCreditLedger over PGlite',
  async () => {
    const db = await embedded();
    return {
      ledger: new PostgresCreditLedger({ client: db, schema: 'credits', timeoutMs: 10_000 }),
      peer: new PostgresCreditLedger({ client: db, schema: 'credits', timeoutMs: 10_000 }),
      writeAround: async (accountId, amount) => {
        await db.query(
          `INSERT INTO credits.keygate_credit_entries (account_id, kind, amount, balance, created_at) VALUES ($1, 'top_up', $2, 0, now())`,
          [accountId, amount],
        );
      },
      holdState: async (holdId) =>
        (await db.query<{ state: string }>('SELECT state FROM credits.keygate_credit_holds WHERE id = $1', [holdId]))
          .rows[0]?.state,
      pruning: (pruneHoldsAfterMs) =>
        new PostgresCreditLedger({ client: db, schema: 'credits', timeoutMs: 10_000, pruneHoldsAfterMs }),
      stalled,
      ended: async () => {
        const closed = await PGlite.create();
        const ledger = new PostgresCreditLedger({ client: closed });
        await ledger.migrate();
        await ledger.topUp('acct_1', 5);
        await closed.close();
        return ledger;
      },
    };
  },
  { describe, it, expect, beforeEach, afterEach },
  { hooks: ['writeAround', 'holdState', 'pruning', 'stalled', 'ended'] },
);

describe('PostgresCreditLedger over PGlite', () => {
  it('waits 1,000 ms by default, and declares it as its deadline capability', async () => {
    const ledger = new PostgresCreditLedger({ client: await embedded(), schema: 'credits' });
    expect(ledger.timeoutMs).toBe(1_000);
    expect(capabilityOf(ledger, 'deadline')?.timeoutMs).toBe(1_000);
  });

  it('prunes by itself the holds closed a day ago by default; null or 0 turns that off', async () => {
    const client = await embedded();
    expect(new PostgresCreditLedger({ client, schema: 'credits' }).pruneHoldsAfterMs).toBe(86_400_000);
    for (const off of [null, 0]) {
      expect(new PostgresCreditLedger({ client, pruneHoldsAfterMs: off }).pruneHoldsAfterMs).toBe(null);
    }
  });

  it.each([
    [-1, 'out_of_range'],
    ['1d', 'wrong_type'],
  ])('refuses a pruneHoldsAfterMs of %j (%s) at construction', async (value, reason) => {
    const client = await embedded();
    expect(() => new PostgresCreditLedger({ client, pruneHoldsAfterMs: value as never })).toThrow(
      expect.objectContaining({
        code: 'invalid_input',
        field: 'pruneHoldsAfterMs',
        issues: [expect.objectContaining({ reason })],
      }),
    );
  });

  it('deletes in batches of 1,000 until a batch deletes fewer, lapsing idle accounts first', async () => {
    const db = await embedded();
    const ledger = new PostgresCreditLedger({ client: db, schema: 'credits_batches', timeoutMs: 10_000 });
    await ledger.migrate();
    const t = 'credits_batches.keygate_credit_holds';
    await ledger.prune({ olderThanMs: 0 });
    await ledger.topUp('acct_batch', 1_000);
    // 2,100 settled an hour ago, and an idle account's hold expired an hour ago (its 5 credits held).
    await db.query(
      `INSERT INTO ${t} (id, account_id, amount, key_id, state, charged, created_at, expires_at, closed_at)
        SELECT 'hold_b' || n, 'acct_batch', 1, NULL, 'settled', 0, now() - interval '2 hours', now(), now() - interval '1 hour'
        FROM generate_series(1, 2100) n`,
    );
    await ledger.topUp('acct_idle', 5);
    const held = await ledger.hold('acct_idle', 5, { ttlMs: 1 });
    await db.query(`UPDATE ${t} SET expires_at = now() - interval '1 hour' WHERE account_id = 'acct_idle'`);
    expect(await ledger.prune({ olderThanMs: 60_000 })).toEqual({ deleted: 2_101 });
    expect(await ledger.reconcile('acct_idle')).toMatchObject({ entries: 5, balance: 5, held: 0, ok: true });
    expect(await ledger.settle(held.ok ? held.holdId : '')).toMatchObject({ charged: 0 });
    expect(await ledger.balance('acct_idle')).toBe(5);
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t}`)).rows[0]?.n).toBe(0);
  });
});

describe.skipIf(!available)('PostgresCreditLedger over pg', () => {
  // One pool for the contract's tests and one for its peer, as two processes would have.
  let shared: pg.Pool | undefined;
  let other: pg.Pool | undefined;
  beforeAll(async () => {
    shared = pool();
    other = pool();
    await new PostgresCreditLedger({ client: shared, schema: SCHEMA }).migrate();
  });
  const ledgerOn = (p: pg.Pool | undefined) =>
    new PostgresCreditLedger({ client: p as pg.Pool, schema: SCHEMA, timeoutMs: 10_000 });

  const figuresSql = (schema: string) => `SELECT
    (SELECT sum(amount) FROM "${schema}".keygate_credit_entries WHERE account_id = $1) AS entries,
    (SELECT available FROM "${schema}".keygate_credit_balances WHERE account_id = $1) AS available,
    (SELECT sum(amount) FROM "${schema}".keygate_credit_holds WHERE account_id = $1 AND state = 'open') AS open`;
  let migrations = 0;

  describeCreditLedgerContract(
    'PostgresCreditLedger over a pg Pool',
    async () => ({
      ledger: ledgerOn(shared),
      peer: ledgerOn(other),
      writeAround: async (accountId, amount) => {
        await shared!.query(
          `INSERT INTO "${SCHEMA}".keygate_credit_entries (account_id, kind, amount, balance, created_at) VALUES ($1, 'top_up', $2, 0, now())`,
          [accountId, amount],
        );
      },
      holdState: async (holdId) =>
        (await shared!.query(`SELECT state FROM "${SCHEMA}".keygate_credit_holds WHERE id = $1`, [holdId])).rows[0]
          ?.state,
      pruning: (pruneHoldsAfterMs) =>
        new PostgresCreditLedger({ client: other!, schema: SCHEMA, timeoutMs: 10_000, pruneHoldsAfterMs }),
      storedFigures: async (accountId) => {
        const row = (await shared!.query(figuresSql(SCHEMA), [accountId])).rows[0];
        return { entries: Number(row.entries), available: Number(row.available), open: Number(row.open) };
      },
      ended: async () => {
        const p = pool();
        const ledger = new PostgresCreditLedger({ client: p, schema: SCHEMA });
        await ledger.balance('acct_1');
        await p.end();
        return ledger;
      },
      unmigrated: async (count) => {
        const schema = `${SCHEMA}_m${++migrations}`;
        const p = pool();
        const ledgers = Array.from({ length: count }, () => new PostgresCreditLedger({ client: p, schema }));
        return { ledgers, drop: async () => void (await p.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)) };
      },
    }),
    { describe, it, expect, beforeEach, afterEach },
    { hooks: ['writeAround', 'holdState', 'pruning', 'storedFigures', 'ended', 'unmigrated'] },
  );

  it('sends one statement per hold, settle and release (no BEGIN or COMMIT of its own)', async () => {
    const p = pool();
    // Every statement any of the pool's connections sends, BEGIN and COMMIT included.
    const sent: string[] = [];
    p.on('connect', (conn) => {
      const query = conn.query.bind(conn) as (...a: unknown[]) => unknown;
      conn.query = ((...a: unknown[]) => {
        sent.push(String(typeof a[0] === 'string' ? a[0] : (a[0] as { text?: string })?.text));
        return query(...a);
      }) as never;
    });
    // Without its own background prune, which is no statement of a hold's.
    const ledger = new PostgresCreditLedger({ client: p, schema: SCHEMA, pruneHoldsAfterMs: null });
    const account = freshAccount('one_statement');
    await ledgerOn(shared).topUp(account, 10);
    const held = await ledger.hold(account, 4, { keyId: 'key_1' });
    const second = await ledger.hold(account, 3);
    expect(await ledger.settle(held.ok ? held.holdId : '', 2)).toEqual({ charged: 2, balance: 5 });
    expect(await ledger.release(second.ok ? second.holdId : '')).toEqual({ balance: 8 });
    expect(sent).toHaveLength(4);
  });

  it('upgrades a schema made before its functions: migrate() adds them and open holds settle', async () => {
    const schema = `${SCHEMA}_u`;
    const p = pool();
    try {
      const ledger = new PostgresCreditLedger({ client: p, schema, timeoutMs: 10_000 });
      await ledger.migrate();
      await ledger.topUp('acct_1', 10);
      const held = await ledger.hold('acct_1', 4, { keyId: 'key_1' });
      for (const fn of ['hold(text, bigint, text, text, bigint)', 'settle(text, bigint)', 'release(text)']) {
        await p.query(`DROP FUNCTION "${schema}".keygate_credit_${fn}`);
      }
      await p.query(`DROP FUNCTION "${schema}".keygate_credit_sweep(text, timestamptz)`);
      expect(await rejection(ledger.hold('acct_1', 1))).toMatchObject({ code: 'credit_ledger_unavailable' });
      await ledger.migrate();
      await ledger.migrate();
      expect(await ledger.settle(held.ok ? held.holdId : '')).toEqual({ charged: 4, balance: 6 });
      expect(await ledger.reconcile('acct_1')).toMatchObject({ ok: true, balance: 6, held: 0 });
    } finally {
      await p.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });

  it.each([
    ['client', { client: {} }],
    ['schema', { client: 'pool', schema: 'Credits' }],
    ['timeoutMs', { client: 'pool', timeoutMs: 0 }],
  ])('refuses a bad %s option at construction', (field, options) => {
    const withPool = options.client === 'pool' ? { ...options, client: pool() } : options;
    expect(() => new PostgresCreditLedger(withPool as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', field }),
    );
  });
});
