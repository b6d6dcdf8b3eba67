import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyManager } from 'keygate';
import { createApp } from '../../../examples/email-verification/app.js';
import type { MxResolver } from '../../../examples/email-verification/mx.js';
import { main } from '../../../examples/email-verification/server.js';
import { openStores, type Stores } from '../../../examples/email-verification/stores.js';

export { createApp, PRICES } from '../../../examples/email-verification/app.js';
export { DEMO_CREDITS, main } from '../../../examples/email-verification/server.js';

type MxRecord = Awaited<ReturnType<MxResolver['resolveMx']>>[number];

const dnsError = (code: string) => Object.assign(new Error(`DNS ${code}`), { code });

/**
 * A DNS stand-in: what each test domain answers, and the list of questions asked (so tests can show
 * that sandbox requests never reach DNS). `slow.example` never answers.
 */
export function fakeDns() {
  const asked: string[] = [];
  const mx: Record<string, MxRecord[] | string> = {
    'example.com': [
      { exchange: 'mx2.example.com', priority: 20 },
      { exchange: 'mx1.example.com', priority: 10 },
    ],
    'xn--bcher-kva.example': [{ exchange: 'mail.xn--bcher-kva.example', priority: 0 }],
    'mailinator.com': [{ exchange: 'mail.mailinator.com', priority: 10 }],
    'a-only.example': 'ENODATA',
    'nothing.example': 'ENODATA',
    'nullmx.example': [{ exchange: '', priority: 0 }],
    'servfail.example': 'ESERVFAIL',
    'slow.example': 'hang',
  };
  const answer = <T>(value: T | string | undefined): Promise<T> => {
    if (value === 'hang') return new Promise(() => {});
    if (value === undefined) return Promise.reject(dnsError('ENOTFOUND'));
    if (typeof value === 'string') return Promise.reject(dnsError(value));
    return Promise.resolve(value);
  };
  const resolver: MxResolver = {
    resolveMx: (domain) => {
      asked.push(domain);
      return answer(mx[domain]);
    },
    resolve4: (domain) =>
      answer<string[]>(domain === 'a-only.example' ? ['192.0.2.1'] : mx[domain] ? 'ENODATA' : undefined),
    resolve6: (domain) => answer<string[]>(mx[domain] ? 'ENODATA' : undefined),
  };
  return { resolver, asked };
}

export const ACCOUNT = 'acct_test';
export const ALL = ['email:verify', 'email:score', 'contacts:find'];

/**
 * The service listening on 127.0.0.1 (a free port), on the chosen backend, with an account holding
 * `credits` and keys: live and test with every permission, one live key per single permission, one
 * restricted to an address range the test client is not in, and one revoked.
 */
export async function startService(
  backend: 'memory' | 'pglite',
  credits = 1000,
  appOptions: (stores: Stores) => Partial<Parameters<typeof createApp>[0]> = () => ({}),
) {
  const dataDir = backend === 'pglite' ? await mkdtemp(join(tmpdir(), 'keygate-email-')) : '';
  const stores = await openStores({ memory: backend === 'memory', dataDir });
  if (credits > 0) await stores.ledger.topUp(ACCOUNT, credits);
  const keys = new KeyManager({ store: stores.store });
  const make = async (name: string, mode: 'live' | 'test', permissions = ALL, allowedIps: string[] = []) =>
    (await keys.create({ accountId: ACCOUNT, name, mode, permissions, allowedIps })).secret;
  const secrets = {
    live: await make('live', 'live'),
    test: await make('test', 'test'),
    verifyOnly: await make('verify only', 'live', ['email:verify']),
    scoreOnly: await make('score only', 'live', ['email:score']),
    findOnly: await make('find only', 'live', ['contacts:find']),
    elsewhere: await make('office only', 'live', ALL, ['203.0.113.0/24']),
    revoked: await make('revoked', 'live'),
  };
  const revoked = (await keys.list(ACCOUNT)).find((k) => k.name === 'revoked');
  if (revoked) await keys.revoke(revoked.id);
  const dns = fakeDns();
  const app = createApp({
    store: stores.store,
    ledger: stores.ledger,
    resolver: dns.resolver,
    dnsTimeoutMs: 200,
    rateLimiter: stores.limiter,
    ...appOptions(stores),
  });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function call(method: string, path: string, key?: string, body?: unknown, raw?: string) {
    const headers: Record<string, string> = {};
    if (key) headers['x-api-key'] = key;
    if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url + path, {
      method,
      headers,
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
    const json: any = text ? JSON.parse(text) : null;
    return { status: res.status, type: res.headers.get('content-type') ?? '', headers: res.headers, json };
  }

  return {
    url,
    secrets,
    keys,
    ledger: stores.ledger,
    dns,
    call,
    post: (path: string, key: string | undefined, body?: unknown) => call('POST', path, key, body),
    balance: () => stores.ledger.balance(ACCOUNT),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await stores.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export type Service = Awaited<ReturnType<typeof startService>>;

/** A whole API key as `npm start` prints it, alone on its line. */
export const KEY_LINE = /^mk_(test|live)_[0-9A-Za-z]{38}$/;

/**
 * Starts the service in this process as `npm start` does (`main`), on a free port (PORT=0 unless
 * `env` says otherwise) and the fake DNS, and keeps what it printed: every line, the whole output,
 * and the printed keys (lines matching `KEY_LINE`), besides `url` and `close` from `main`.
 *
 * @example
 * const s = await startMain(['--memory']);
 * try {
 *   expect(s.secrets.map((k) => k.slice(0, 8))).toEqual(['mk_test_', 'mk_live_']);
 * } finally {
 *   await s.close();
 * }
 */
export async function startMain(argv: string[], env: Record<string, string> = {}) {
  const lines: string[] = [];
  const started = await main({
    argv,
    env: { PORT: '0', ...env },
    log: (text: string) => lines.push(...text.split('\n')),
    resolver: fakeDns().resolver,
  });
  const output = lines.join('\n');
  const secrets = lines.filter((line) => KEY_LINE.test(line));
  return { ...started, lines, output, secrets };
}
export const BACKENDS = ['memory', 'pglite'] as const;
/** Per-test time limit (ms) where a test opens PGlite, whose first start takes seconds on a busy 2-core machine. */
export const PGLITE = { timeout: 60_000 };
