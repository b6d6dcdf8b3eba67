// Run by Bun (from test/frameworks/elysia.test.ts): the shared case routes on Elysia over a real socket,
// plus two routes for the client-address rule, on 127.0.0.1 and a free port. Seeds its own store and
// prints one JSON line (the base URL, the secrets and ids) for the test; stops when stdin closes.
import { Elysia } from 'elysia';
import { KeyManager } from 'keygate';
import { apiKeyAuth, socketAddress } from 'keygate/elysia';
import { createElysiaApp } from '../elysia-app.js';
import { seedCaseStore } from '../fixtures.js';

const { store, secrets, ids } = await seedCaseStore();
// A key that only a client on this machine may use: proves where the address came from.
const loopback = await new KeyManager({ store }).create({
  accountId: 'acct_1',
  name: 'loopback',
  mode: 'live',
  allowedIps: ['127.0.0.1/32'],
});

const app = new Elysia()
  .use(createElysiaApp(store))
  .use(
    new Elysia()
      .use(apiKeyAuth({ store, clientIp: socketAddress }))
      .get('/socket', ({ apiKey }) => ({ keyId: apiKey.id })),
  )
  .use(new Elysia().use(apiKeyAuth({ store })).get('/no-address', ({ apiKey }) => ({ keyId: apiKey.id })))
  .listen({ port: 0, hostname: '127.0.0.1' });

const base = `http://127.0.0.1:${app.server?.port}`;
console.log(JSON.stringify({ base, secrets, ids, loopback: { secret: loopback.secret, id: loopback.key.id } }));

process.stdin.resume();
process.stdin.on('end', () => {
  void app.stop().then(() => process.exit(0));
});
