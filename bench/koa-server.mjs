// One Koa benchmark server per process: `node bench/koa-server.mjs <variant>` with the key in BENCH_KEY.
// Prints `{"port":N}` once listening on 127.0.0.1; the routes are those of bench/ab.frameworks.mjs.
import { apiKeyAuth } from 'keygate/koa';
import Koa from 'koa';
import { BODY, keyStoreWith, PERMISSION } from './fixture.mjs';

// Koa has no body parser of its own: every variant reads the JSON body the same way.
async function jsonBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const VARIANTS = {
  'koa-bare': async () => [],
  'koa-noop': async () => [async (_ctx, next) => next()],
  'koa-keygate': async () => [
    apiKeyAuth({ store: await keyStoreWith(process.env.BENCH_KEY), permissions: [PERMISSION] }),
  ],
};

const variant = process.argv[2];
if (!VARIANTS[variant]) throw new Error(`unknown variant ${variant}`);
const app = new Koa();
for (const middleware of await VARIANTS[variant]()) app.use(middleware);
app.use(async (ctx) => {
  if (ctx.method === 'GET' && ctx.path === '/v1/ping') {
    ctx.type = 'application/json';
    ctx.body = BODY;
  } else if (ctx.method === 'POST' && ctx.path === '/v1/echo') {
    ctx.body = { count: (await jsonBody(ctx.req)).emails.length };
  }
});
const server = app.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
