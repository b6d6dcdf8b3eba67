// `keygate credits show|top-up|entries|reconcile`: an account's prepaid credits in the ledger beside
// the key store `--store` names, the one a service over that store keeps (same schema; on Redis under
// `<prefix>credits:`). In-process on each store (where a test can say whether stdout is a terminal),
// and the built binary for what a shell sees (exit codes).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreditLedger } from 'keygate';
import { openPGliteFolder, PostgresCreditLedger } from 'keygate/postgres';
import { RedisCreditLedger } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { PG_URL, REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { ensureBuilt, keygate } from './support/keygate.js';

const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-credits-'));
const pgUp = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const redisUp = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
const SCHEMA = `keygate_clicr_${RUN_ID}`;
const PREFIX = `keygate:test:cli${RUN_ID}:`;

/** A store URL, and a way to reach the same ledger the way a service (or someone around it) would. */
interface Store {
  url: string;
  /** Runs `work` with the service's ledger over the store, and a raw SQL or Redis command. */
  service(
    work: (ledger: CreditLedger, raw: (...command: unknown[]) => Promise<unknown>) => Promise<void>,
  ): Promise<void>;
}

/** The ledger in a PGlite folder; the CLI closes the folder after each command, so a test can take it in between. */
async function serviceIn(folderPath: string, work: Parameters<Store['service']>[0]): Promise<void> {
  const folder = await openPGliteFolder(folderPath);
  try {
    const ledger = new PostgresCreditLedger({ client: folder.client, timeoutMs: 10_000 });
    await ledger.migrate();
    await work(ledger, (sql, params) => folder.client.query(sql as string, params as unknown[]));
  } finally {
    await folder.close();
  }
}

const pgliteStore: Store = { url: `pglite:${join(dir, 'db')}`, service: (work) => serviceIn(join(dir, 'db'), work) };

const pgUrl = new URL(PG_URL);
pgUrl.searchParams.set('schema', SCHEMA);
const postgresStore: Store = {
  url: pgUrl.toString(),
  async service(work) {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    try {
      const ledger = new PostgresCreditLedger({ client: pool, schema: SCHEMA });
      await ledger.migrate();
      await work(ledger, (sql, params) =>
        pool.query((sql as string).replaceAll('public.', `"${SCHEMA}".`), params as unknown[]),
      );
    } finally {
      await pool.end();
    }
  },
};

const redisStore: Store = {
  url: `${REDIS_URL}?prefix=${encodeURIComponent(PREFIX)}`,
  async service(work) {
    const client = await createClient({ url: REDIS_URL }).connect();
    try {
      const ledger = new RedisCreditLedger({ client, prefix: `${PREFIX}credits:` });
      await work(ledger, (...command) => client.sendCommand(command as string[]));
    } finally {
      client.destroy();
    }
  },
};

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (pgUp) {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await admin.end();
  }
  if (redisUp) {
    const client = await createClient({ url: REDIS_URL }).connect();
    const keys = (await client.sendCommand(['KEYS', `${PREFIX}*`])) as string[];
    if (keys.length > 0) await client.sendCommand(['DEL', ...keys]);
    client.destroy();
  }
});

async function cli(store: string, argv: string[], terminal = false) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--store', store], {
    env: {},
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
    terminal,
  });
  return { code, stdout, stderr };
}

let accounts = 0;
const freshAccount = () => `acct_cli_credits_${RUN_ID}_${++accounts}`;

/** Writes an entry around the ledger, so that its entries no longer add up. */
async function tamper(store: Store, accountId: string): Promise<void> {
  await store.service(async (_, raw) => {
    if (store.url.startsWith('redis')) {
      const tag = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(accountId))).toString(
        'base64url',
      );
      const entry = JSON.stringify({ id: 'ce_x', kind: 'top_up', amount: '5', balance: '0', at: String(Date.now()) });
      await raw('LPUSH', `${PREFIX}credits:{${tag}}:entries`, entry);
    } else {
      await raw(
        `INSERT INTO public.keygate_credit_entries (account_id, kind, amount, balance, created_at) VALUES ($1, 'top_up', 5, 0, now())`,
        [accountId],
      );
    }
  });
}

describe.each([
  ['a PGlite folder', pgliteStore, true],
  ['a PostgreSQL server', postgresStore, pgUp],
  ['a Redis server', redisStore, redisUp],
] as const)('keygate credits on %s', { timeout: 60_000 }, (_, store, up) => {
  const run = (argv: string[], terminal = false) => cli(store.url, argv, terminal);

  it.skipIf(!up)('show gives an unknown account 0 available, 0 held and 0 in total', async () => {
    const account = freshAccount();
    const shown = await run(['credits', 'show', '--account', account]);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toMatch(/^ {2}available +0 credits$/m);
    expect(shown.stdout).toMatch(/^ {2}held +0 credits \(open holds\)$/m);
    const json = await run(['credits', 'show', '--account', account, '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ accountId: account, balance: 0, held: 0, total: 0 });
  });

  it.skipIf(!up)(
    'top-up credits a reference once, says whether it was applied, and show sees the holds of the service',
    async () => {
      const account = freshAccount();
      const first = await run(['credits', 'top-up', '--account', account, '--amount', '500', '--reference', 'pi_1']);
      expect(first).toMatchObject({ code: 0, stderr: '' });
      expect(first.stdout).toBe(`Added 500 credits to ${account} (reference pi_1); balance now 500 credits.\n`);
      const again = await run(['credits', 'top-up', '--account', account, '--amount', '500', '--reference', 'pi_1']);
      expect(again.stdout).toBe(
        `Reference pi_1 was already recorded for ${account}: nothing added; balance now 500 credits.\n`,
      );
      const json = await run([
        'credits',
        'top-up',
        '--account',
        account,
        '--amount',
        '70',
        '--reference',
        'pi_1',
        '--json',
      ]);
      expect(JSON.parse(json.stdout)).toEqual({
        accountId: account,
        amount: 70,
        reference: 'pi_1',
        applied: false,
        balance: 500,
      });
      const plain = await run(['credits', 'top-up', '--account', account, '--amount', '25', '--json']);
      expect(JSON.parse(plain.stdout)).toEqual({ accountId: account, amount: 25, applied: true, balance: 525 });

      await store.service(async (ledger) => {
        const held = await ledger.hold(account, 30, { keyId: 'key_cli' });
        if (held.ok) await ledger.settle(held.holdId, 10);
        await ledger.hold(account, 5, { ttlMs: 600_000 });
      });
      const shown = await run(['credits', 'show', '--account', account, '--json']);
      expect(JSON.parse(shown.stdout)).toEqual({ accountId: account, balance: 510, held: 5, total: 515 });
      expect((await run(['credits', 'show', '--account', account])).stdout).toMatch(
        /^ {2}total +515 credits \(available \+ held\)$/m,
      );
    },
  );

  it.skipIf(!up).each([['0'], ['-5'], ['1.5'], ['1e3'], ['ten'], ['9007199254740992'], ['']])(
    'top-up refuses --amount %j with exit 1 and a message naming amount, writing nothing',
    async (amount) => {
      const account = freshAccount();
      const refused = await run([
        'credits',
        'top-up',
        '--account',
        account,
        `--amount=${amount}`,
        '--reference',
        'pi_bad',
      ]);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(/^keygate: .*--amount/);
      const json = await run(['credits', 'top-up', '--account', account, `--amount=${amount}`, '--json']);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'invalid_input', field: '--amount' });
      expect(JSON.parse((await run(['credits', 'entries', '--account', account, '--json'])).stdout)).toEqual([]);
      // The reference is still unused.
      const later = await run([
        'credits',
        'top-up',
        '--account',
        account,
        '--amount',
        '1',
        '--reference',
        'pi_bad',
        '--json',
      ]);
      expect(JSON.parse(later.stdout)).toMatchObject({ applied: true, balance: 1 });
    },
  );

  it.skipIf(!up)(
    'entries prints a table newest first on a terminal, --limit the newest N, --json the entries',
    async () => {
      const account = freshAccount();
      await run(['credits', 'top-up', '--account', account, '--amount', '100', '--reference', 'pi_7']);
      await store.service(async (ledger) => {
        const held = await ledger.hold(account, 3, { keyId: 'key_table' });
        if (held.ok) await ledger.settle(held.holdId);
      });
      const table = await run(['credits', 'entries', '--account', account], true);
      expect(table.code).toBe(0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^DATE \(UTC\) +KIND +AMOUNT +BALANCE +KEY +REFERENCE +ID$/);
      expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +charge +-3 +97 +key_table +ce_\S+$/);
      expect(lines[2]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +top_up +\+100 +100 +pi_7 +ce_\S+$/);
      expect(lines).toHaveLength(3);
      const newest = JSON.parse(
        (await run(['credits', 'entries', '--account', account, '--limit', '1', '--json'])).stdout,
      );
      expect(newest).toEqual([
        expect.objectContaining({ accountId: account, kind: 'charge', amount: -3, balance: 97, keyId: 'key_table' }),
      ]);
      expect((await run(['credits', 'entries', '--account', freshAccount()])).stdout).toBe('no entries\n');
      const bad = await run(['credits', 'entries', '--account', account, '--limit', '1001', '--json']);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stderr).error).toMatchObject({ code: 'invalid_input', field: '--limit' });
    },
  );

  it.skipIf(!up)(
    'reconcile prints the figures and exits 0 when they add up, 5 when an entry was written around the ledger',
    async () => {
      const account = freshAccount();
      await run(['credits', 'top-up', '--account', account, '--amount', '50']);
      await store.service(async (ledger) => void (await ledger.hold(account, 8)));
      const ok = await run(['credits', 'reconcile', '--account', account]);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toMatch(/^ {2}entries +50 /m);
      expect(ok.stdout).toMatch(/^ {2}result +ok: the entries add up to available \+ held \(50\)$/m);
      const json = await run(['credits', 'reconcile', '--account', account, '--json']);
      expect(JSON.parse(json.stdout)).toEqual({ accountId: account, entries: 50, balance: 42, held: 8, ok: true });

      await tamper(store, account);
      const off = await run(['credits', 'reconcile', '--account', account]);
      expect(off.code).toBe(5);
      expect(off.stdout).toMatch(
        /^ {2}result +MISMATCH: the entries add up to 55, available \+ held is 50 \(off by 5\)$/m,
      );
      const offJson = await run(['credits', 'reconcile', '--account', account, '--json']);
      expect(offJson.code).toBe(5);
      expect(JSON.parse(offJson.stdout)).toEqual({ accountId: account, entries: 55, balance: 42, held: 8, ok: false });
      expect((await run(['credits', 'show', '--account', account])).stdout).toMatch(
        /^ {2}warning +the entries add up to 55/m,
      );
    },
  );
});

describe('keygate credits, the built binary', { timeout: 60_000 }, () => {
  beforeAll(ensureBuilt, 120_000);
  const where = { store: `pglite:${join(dir, 'bin')}`, cwd: dir };

  it('exits 1 for a bad amount, 0 for a top-up, 5 for a reconcile that does not add up', async () => {
    const refused = await keygate(where, 'credits', 'top-up', '--account', 'acct_bin', '--amount', '0');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--amount must be a whole number of credits from 1');
    const added = await keygate(where, 'credits', 'top-up', '--account', 'acct_bin', '--amount', '9');
    expect(added).toMatchObject({ code: 0, stdout: 'Added 9 credits to acct_bin; balance now 9 credits.\n' });
    expect((await keygate(where, 'credits', 'reconcile', '--account', 'acct_bin')).code).toBe(0);
    await tamper({ url: where.store, service: (work) => serviceIn(join(dir, 'bin'), work) }, 'acct_bin');
    const off = await keygate(where, 'credits', 'reconcile', '--account', 'acct_bin', '--json');
    expect(off.code).toBe(5);
    expect(JSON.parse(off.stdout)).toMatchObject({ entries: 14, balance: 9, ok: false });
  });

  it('lists the credits commands and exit code 5 in --help', async () => {
    const help = await keygate(where, '--help');
    expect(help.stdout).toContain('keygate credits top-up --account A --amount N [--reference R]');
    expect(help.stdout).toMatch(/^ {2}5 {2}the account's credit entries do not add up .*\(credits reconcile\)$/m);
  });
});
