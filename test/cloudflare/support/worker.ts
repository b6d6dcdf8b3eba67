// A Worker that runs keygate and D1KeyStore inside workerd (Miniflare), bundled by the test without
// `nodejs_compat`: a `node:` import anywhere on the way would fail to load.
import { authenticate, KeyManager } from 'keygate';
import { D1KeyStore, type D1Like, type KVLike } from 'keygate/cloudflare';

interface Env {
  DB: D1Like;
  KEYS: KVLike;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const store = new D1KeyStore({ db: env.DB, cache: env.KEYS, maxStaleMs: 30_000 });
    const keys = new KeyManager({ store });
    const url = new URL(request.url);
    if (url.pathname === '/setup') {
      await store.migrate();
      const { secret, key } = await keys.create({ accountId: 'acct_edge', name: 'edge', mode: 'live' });
      return Response.json({ secret, id: key.id });
    }
    if (url.pathname === '/revoke') {
      await keys.revoke(url.searchParams.get('id') ?? '');
      return new Response(null, { status: 204 });
    }
    const result = await authenticate({ headers: request.headers, ip: '203.0.113.7' }, store);
    return Response.json(result.ok ? { ok: true } : { code: result.code }, { status: result.status });
  },
};
