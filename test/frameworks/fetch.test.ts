import { createDenialResponder } from 'keygate/adapter-kit';
import { withApiKeyAuth } from 'keygate/fetch';
import { describe, expect, it } from 'vitest';
import { seedCaseStore } from './fixtures.js';

const { store, secrets, ids } = await seedCaseStore();
const revoked = createDenialResponder()({ code: 'revoked_api_key' });
const request = (key?: string) => new Request('http://api.test/', { headers: key ? { 'x-api-key': key } : {} });

describe('withApiKeyAuth', () => {
  it('calls handler(request, key, ...rest) and passes rest to clientIp', async () => {
    type Env = { ALLOWED: string };
    const seen: unknown[] = [];
    const handle = withApiKeyAuth(
      (req: Request, key, env: Env, ctx: { tag: string }) => {
        seen.push(req.url, env.ALLOWED, ctx.tag);
        return Response.json({ keyId: key.id });
      },
      { store, clientIp: (_req, env) => env.ALLOWED },
    );
    const res = await handle(request(secrets.allowListed), { ALLOWED: '203.0.113.9' }, { tag: 'ctx' });
    expect(await res.json()).toEqual({ keyId: ids.allowListed });
    expect(seen).toEqual(['http://api.test/', '203.0.113.9', 'ctx']);
  });

  it('never calls the handler for a denial', async () => {
    let calls = 0;
    const handle = withApiKeyAuth(
      () => {
        calls++;
        return new Response('secret data');
      },
      { store },
    );
    expect((await handle(request(secrets.revoked))).status).toBe(401);
    expect(calls).toBe(0);
  });

  it('onDenied replaces the response and gets the rest arguments', async () => {
    const handle = withApiKeyAuth((_req, _key, _env: { name: string }) => new Response('ok'), {
      store,
      onDenied: (failure, _req, env) => Response.json({ error: failure.code, env: env.name }, { status: 400 }),
    });
    const res = await handle(request(), { name: 'prod' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'missing_api_key', env: 'prod' });
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('bug');
      },
    ],
    ['rejects', () => Promise.reject(new Error('bug'))],
    ['returns something that is not a Response', () => ({ status: 200 }) as unknown as Response],
  ])('when onDenied %s, the standard denial is sent', async (_, onDenied) => {
    const handle = withApiKeyAuth(() => new Response('ok'), { store, onDenied });
    const res = await handle(request(secrets.revoked));
    expect(res.status).toBe(revoked.status);
    expect(await res.text()).toBe(revoked.body);
  });
});
