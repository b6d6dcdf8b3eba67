// keygate/cloudflare inside workerd itself: a Worker bundled from the sources (no `nodejs_compat`)
// creates a key in D1, authenticates it through the KV cache, and refuses it once revoked.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let mf: Miniflare | undefined;

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('./support/worker.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['source', 'workerd', 'worker', 'browser', 'import'],
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]!.text;
  expect(script).not.toMatch(/from\s*["']node:/);
  mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2025-07-01',
    d1Databases: ['DB'],
    kvNamespaces: ['KEYS'],
  });
}, 60_000);
afterAll(() => mf?.dispose());

describe('keygate/cloudflare on workerd', () => {
  it('authenticates a key from D1 through the KV cache inside a Worker, and refuses it after a revocation there', async () => {
    const worker = mf!;
    const setup = await worker.dispatchFetch('http://edge.test/setup');
    const { secret, id } = (await setup.json()) as { secret: string; id: string };
    const call = () => worker.dispatchFetch('http://edge.test/v1/hello', { headers: { 'x-api-key': secret } });
    const first = await call();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true });
    expect((await call()).status).toBe(200); // served from KV
    const none = await worker.dispatchFetch('http://edge.test/v1/hello');
    expect(await none.json()).toEqual({ code: 'missing_api_key' });
    expect((await worker.dispatchFetch(`http://edge.test/revoke?id=${id}`)).status).toBe(204);
    const after = await call();
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ code: 'revoked_api_key' });
  });
});
