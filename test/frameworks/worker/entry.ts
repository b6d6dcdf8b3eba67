// A test worker: the shared routes through keygate/fetch under /fetch and keygate/hono under /hono,
// over a store rebuilt from the records the Node side seeded (binding RECORDS, JSON).
import { Hono } from 'hono';
import { getConnInfo } from 'hono/cloudflare-workers';
import type { ApiKeyRecord, KeyStore } from 'keygate';
import { clientIp, withApiKeyAuth } from 'keygate/fetch';
import { type ApiKeyEnv, apiKeyAuth } from 'keygate/hono';
import { createFetchHandler, createHonoApp } from '../apps.js';
import { storeFromRecords } from '../fixtures.js';

let fetchCloudflare: (request: Request) => Promise<Response>;
let fetchNoClientIp: (request: Request) => Promise<Response>;
const echo = (_request: Request, key: { id: string }) => Response.json({ keyId: key.id });

// Routes that answer with the key id, reading the address the recommended way or not at all.
function withAddressProbes(app: Hono<ApiKeyEnv>, store: KeyStore): Hono<ApiKeyEnv> {
  fetchCloudflare = withApiKeyAuth(echo, { store, clientIp: clientIp.cloudflare });
  fetchNoClientIp = withApiKeyAuth(echo, { store });
  const probes = new Hono<ApiKeyEnv>();
  probes.get('/cloudflare', apiKeyAuth({ store, clientIp: (c) => getConnInfo(c).remote.address }), (c) =>
    c.json({ keyId: c.get('apiKey').id }),
  );
  probes.get('/no-client-ip', apiKeyAuth({ store }), (c) => c.json({ keyId: c.get('apiKey').id }));
  return app.route('/', probes);
}

type App = { fetch(request: Request): Response | Promise<Response> };
let apps: Promise<{ fetch: App; hono: App }> | undefined;

export default {
  async fetch(request: Request, env: { RECORDS: string }): Promise<Response> {
    apps ??= storeFromRecords(JSON.parse(env.RECORDS) as ApiKeyRecord[]).then((store) => ({
      fetch: { fetch: createFetchHandler(store, '/fetch') },
      hono: withAddressProbes(createHonoApp(store, '/hono'), store),
    }));
    const { fetch, hono } = await apps;
    const path = new URL(request.url).pathname;
    if (path.startsWith('/hono/')) return hono.fetch(request);
    if (path === '/fetch/cloudflare') return fetchCloudflare(request);
    if (path === '/fetch/no-client-ip') return fetchNoClientIp(request);
    return fetch.fetch(request);
  },
};
