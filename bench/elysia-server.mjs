// One Elysia benchmark server per process, on Bun: `bun bench/elysia-server.mjs <variant>` with the key
// in BENCH_KEY. Prints `{"port":N}` once listening on 127.0.0.1; the routes are those of bench/ab.frameworks.mjs.
import { Elysia } from 'elysia';
import { apiKeyAuth, socketAddress } from 'keygate/elysia';
import { BODY, keyStoreWith, PERMISSION } from './fixture.mjs';

const VARIANTS = {
  'elysia-bare': async () => new Elysia(),
  // A plugin with one scoped hook that does nothing, where keygate's resolve runs.
  'elysia-noop': async () => new Elysia().use(new Elysia().onBeforeHandle({ as: 'scoped' }, () => {})),
  'elysia-keygate': async () =>
    new Elysia().use(
      apiKeyAuth({
        store: await keyStoreWith(process.env.BENCH_KEY),
        permissions: [PERMISSION],
        clientIp: socketAddress,
      }),
    ),
};

const variant = process.argv[2];
if (!VARIANTS[variant]) throw new Error(`unknown variant ${variant}`);
const app = (await VARIANTS[variant]())
  .get('/v1/ping', () => new Response(BODY, { headers: { 'content-type': 'application/json' } }))
  .post('/v1/echo', ({ body }) => ({ count: body.emails.length }))
  .listen({ port: 0, hostname: '127.0.0.1' });
console.log(JSON.stringify({ port: app.server.port }));
process.on('SIGTERM', () => app.stop().then(() => process.exit(0)));
