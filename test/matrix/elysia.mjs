// The matrix case table through keygate/elysia on Bun, over a real socket: each case's options become an
// Elysia app listening on 127.0.0.1, and the case's request goes to it with `fetch`. Prints the results
// as one JSON line, which run.mjs compares with Node 20's answers through keygate/fetch.
import { Elysia } from 'elysia';
import { apiKeyAuth } from 'keygate/elysia';
import { answer, runCases } from './cases.mjs';

async function overBunSocket(options) {
  return async (request) => {
    const app = new Elysia()
      .use(apiKeyAuth(options))
      .get('/v1/email/verify', ({ apiKey }) => answer(apiKey))
      .listen({ port: 0, hostname: '127.0.0.1' });
    try {
      const url = new URL(request.url);
      const res = await fetch(`http://127.0.0.1:${app.server.port}${url.pathname}`, { headers: request.headers });
      return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
    } finally {
      await app.stop();
    }
  };
}

console.log(JSON.stringify(await runCases(overBunSocket)));
