// keygate/adapter-kit as someone writing an adapter for another framework uses it: a plain
// `node:http` adapter built from it answers the shared case table with the same bytes as the
// built-in adapters, and the kit's pieces keep the promises the built-in adapters rely on.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthFailure, KeyStore } from 'keygate';
import {
  type AdapterOptions,
  type AdapterRequest,
  authenticate,
  createDenialResponder,
  createFetchDenier,
  createNodeDenier,
  rateLimitHeaderFields,
  readAddress,
  resolveAdapterOptions,
} from 'keygate/adapter-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { routeOptions } from '../frameworks/apps.js';
import { itAnswersEveryCase, sendOverHttp } from '../frameworks/cases.js';
import { seedCaseStore } from '../frameworks/fixtures.js';

/** The adapter a user would write: about a dozen lines on top of the kit. */
function nodeHttpAuth(options: AdapterOptions<IncomingMessage>, handler: (res: ServerResponse, keyId: string) => void) {
  const { store, auth, respond } = resolveAdapterOptions(options);
  const deny = createNodeDenier<[IncomingMessage, ServerResponse]>({
    respond,
    answered: (_req, res) => res.headersSent,
    write: (denial, _req, res) => res.writeHead(denial.status, denial.headers).end(denial.body),
  });
  return async (req: IncomingMessage, res: ServerResponse) => {
    // The test's stand-in for a proxy that overwrites the header (as in the shared case table).
    const ip = req.headers['x-forwarded-for'] as string | undefined;
    const request: AdapterRequest<IncomingMessage> = { headers: req.headers, ip, native: req };
    const result = await authenticate(request, store, auth);
    if (!result.ok) return deny(result, req, res);
    if (result.rateLimit)
      for (const [name, value] of Object.entries(rateLimitHeaderFields(result.rateLimit))) res.setHeader(name, value);
    handler(res, result.key.id);
  };
}

const fixture = await seedCaseStore();
const servers: Array<{ close(): void }> = [];
afterAll(() => {
  for (const server of servers) server.close();
});

function serveRoutes(store: KeyStore): Promise<string> {
  const routes = new Map(
    Object.entries(routeOptions(store)).map(([path, options]) => [
      path,
      nodeHttpAuth(options, (res, keyId) => res.writeHead(200).end(JSON.stringify({ keyId }))),
    ]),
  );
  const server = createServer((req, res) => void routes.get(req.url ?? '')?.(req, res));
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

describe('a node:http adapter written with the kit', () => {
  const base = serveRoutes(fixture.store);
  itAnswersEveryCase(
    () => fixture,
    () => sendOverHttp(base),
  );
});

describe('retryAfterMs', () => {
  it.each([
    [undefined, '5'],
    [7000, '7'],
    [1500, '2'],
    [1, '1'],
    [0, '1'],
  ])('%s ms is sent as Retry-After: %s on a 503', (retryAfterMs, header) => {
    const denial = createDenialResponder({ retryAfterMs })({ code: 'key_store_unavailable' });
    expect(denial.headers['retry-after']).toBe(header);
  });
});

describe('readAddress', () => {
  it.each([
    ['no resolver', undefined, undefined],
    ['a resolver that answers at once', () => '203.0.113.7', '203.0.113.7'],
    ['a resolver that answers later', async () => '203.0.113.7', '203.0.113.7'],
    [
      'a resolver that throws',
      () => {
        throw new Error('no socket');
      },
      undefined,
    ],
    ['a resolver that rejects', () => Promise.reject(new Error('no socket')), undefined],
  ])('%s gives %s', async (_, resolve, address) => {
    expect(await readAddress(resolve as never)).toBe(address);
  });

  it('answers in the same tick when the resolver does, so a cached key costs no promise', () => {
    expect(readAddress(() => '203.0.113.7')).toBe('203.0.113.7');
  });
});

describe('the onDenied fallback', () => {
  const respond = createDenialResponder();
  const failure: AuthFailure = { ok: false, status: 401, code: 'revoked_api_key', message: 'revoked' };
  const standard = respond(failure);

  it.each([
    [
      'throws',
      () => {
        throw new Error('bug');
      },
    ],
    ['rejects', () => Promise.reject(new Error('bug'))],
    ['returns something that is not a Response', () => ({ status: 200 })],
  ])('Fetch style: a hook that %s gives the standard denial', async (_, hook) => {
    const deny = createFetchDenier(respond, hook as never);
    const res = await deny(failure);
    expect(res.status).toBe(standard.status);
    expect(await res.text()).toBe(standard.body);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('bug');
      },
    ],
    ['rejects', () => Promise.reject(new Error('bug'))],
    ['sends nothing', () => undefined],
  ])('Node style: a hook that %s gives the standard denial', async (_, hook) => {
    const written: number[] = [];
    const deny = createNodeDenier<[]>({
      respond,
      onDenied: hook,
      answered: () => written.length > 0,
      write: (denial) => written.push(denial.status),
    });
    await deny(failure);
    expect(written).toEqual([standard.status]);
  });

  it('Node style: a hook that answers is left alone', async () => {
    const written: number[] = [];
    const deny = createNodeDenier<[]>({
      respond,
      onDenied: () => written.push(418),
      answered: () => written.length > 0,
      write: (denial) => written.push(denial.status),
    });
    await deny(failure);
    expect(written).toEqual([418]);
  });
});
