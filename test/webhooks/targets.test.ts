// Where a webhook may go: never the sender's own network. Internal targets are refused when an endpoint
// is added or changed, and again at send time for every address a name resolves to (the connection
// going to the address that was checked); the account's delivery log shows a failure's class only;
// a slow endpoint holds up its own deliveries, nobody else's. Real HTTP servers on 127.0.0.1; names
// that resolve to a chosen address come from the dispatcher's `lookup` option (this machine has no
// public DNS), and `localhost` from the system resolver.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { capabilityOf, KeyManager, MemoryKeyStore } from 'keygate';
import type { Outbox } from 'keygate/store-kit';
import {
  type AttemptFailure,
  createWebhookDispatcher,
  keyNotifications,
  MemoryOutbox,
  outboxEvents,
  verifyWebhook,
} from 'keygate/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_TARGET_ATTACKS } from '../fixtures/attacks.js';
import { type Receiver, startReceiver } from './support/receiver.js';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

const port = () => Number(new URL(receiver.url('/')).port);
const receivedAt = (path: string) => receiver.received.filter((r) => r.path === path);

function setUp() {
  const store = new MemoryKeyStore({ outbox: new MemoryOutbox() });
  return { outbox: capabilityOf(store, 'outbox') as Outbox, keys: new KeyManager({ store }) };
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe('an endpoint URL on an internal host', () => {
  it.each(WEBHOOK_TARGET_ATTACKS)(
    '$url ($class: $target) is refused when added, and nothing is written',
    async ({ url }) => {
      const { outbox } = setUp();
      const err = await refusal(outbox.endpoints.create({ accountId: 'acct_1', url }));
      expect(err).toMatchObject({ code: 'invalid_input', field: 'url' });
      expect((err as Error).message).toMatch(/url must point at a public host/);
      expect(await outbox.endpoints.list('acct_1')).toEqual([]);
    },
  );

  it.each(WEBHOOK_TARGET_ATTACKS)(
    '$url ($class) is refused as a new URL, and the endpoint is unchanged',
    async ({ url }) => {
      const { outbox } = setUp();
      const { endpoint } = await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/a' });
      const err = await refusal(outbox.endpoints.update('acct_1', endpoint.id, { url, enabled: false }));
      expect(err).toMatchObject({ code: 'invalid_input', field: 'url' });
      expect(await outbox.endpoints.get('acct_1', endpoint.id)).toEqual(endpoint);
    },
  );

  it.each([
    'https://hooks.example.com/keygate',
    'https://93.184.215.14/',
    'https://172.32.0.1/',
    'https://100.128.0.1/',
    'https://[2606:4700:4700::1111]/',
    'http://[64:ff9b::808:808]/',
    'https://hooks.example.com./',
  ])('%s, a public host, is accepted', async (url) => {
    const { outbox } = setUp();
    const { endpoint } = await outbox.endpoints.create({ accountId: 'acct_1', url });
    expect(endpoint.url).toBe(new URL(url).href);
  });

  it("is accepted with the operator's allowPrivateNetworks, and a misspelt option is refused, naming the nearest", async () => {
    const { outbox } = setUp();
    const local = await outbox.endpoints.create(
      { accountId: 'acct_1', url: 'http://127.0.0.1:4000/' },
      { allowPrivateNetworks: true },
    );
    expect(local.endpoint.url).toBe('http://127.0.0.1:4000/');
    const typo = await refusal(
      outbox.endpoints.create({ accountId: 'acct_1', url: 'http://10.0.0.1/' }, {
        allowPrivateNetwork: true,
      } as never),
    );
    expect(typo).toMatchObject({ code: 'invalid_input', field: 'allowPrivateNetwork' });
    expect((typo as Error).message).toContain('did you mean `allowPrivateNetworks`?');
    // Nor is it a field of the endpoint: there it is refused, not ignored.
    const inInput = await refusal(
      outbox.endpoints.create({ accountId: 'acct_1', url: 'http://10.0.0.1/', allowPrivateNetworks: true } as never),
    );
    expect(inInput).toMatchObject({ code: 'invalid_input', field: 'allowPrivateNetworks' });
    expect(await outbox.endpoints.list('acct_1')).toHaveLength(1);
  });
});

describe('at send time', () => {
  it('a public-looking name that resolves to 127.0.0.1 is refused: no connection, the delivery shows refused_target', async () => {
    const { outbox, keys } = setUp();
    const url = `http://hooks.example.com:${port()}/rebound`;
    await outbox.endpoints.create({ accountId: 'acct_1', url });
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    const failures: AttemptFailure[] = [];
    const asked: string[] = [];
    const dispatcher = createWebhookDispatcher({
      outbox,
      lookup: async (hostname) => {
        asked.push(hostname);
        return [{ address: '127.0.0.1', family: 4 }];
      },
      onAttemptFailed: (f) => failures.push(f),
    });
    expect(await dispatcher.runOnce()).toEqual({ claimed: 1, delivered: 0, failed: 1, gaveUp: 0 });
    expect(asked).toEqual(['hooks.example.com']);
    expect(receivedAt('/rebound')).toEqual([]);
    const [delivery] = await outbox.deliveries({ accountId: 'acct_1' });
    expect(delivery).toMatchObject({ status: 'pending', lastError: 'refused_target', lastStatusCode: null });
    // The operator hears why; the account's log says nothing of the address.
    expect(failures).toEqual([expect.objectContaining({ failure: 'refused_target', accountId: 'acct_1' })]);
    expect(String(failures[0]?.error)).toMatch(/hooks\.example\.com is loopback/);
    expect(JSON.stringify(delivery)).not.toMatch(/127\.0\.0\.1|loopback/);
  });

  it('a name with one internal address among public ones is refused', async () => {
    const { outbox, keys } = setUp();
    await outbox.endpoints.create({ accountId: 'acct_1', url: `http://hooks.example.com:${port()}/mixed` });
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    const dispatcher = createWebhookDispatcher({
      outbox,
      lookup: async () => [
        { address: '93.184.215.14', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ],
    });
    await dispatcher.runOnce();
    expect(receivedAt('/mixed')).toEqual([]);
    expect((await outbox.deliveries({ accountId: 'acct_1' }))[0]?.lastError).toBe('refused_target');
  });

  it('localhost, resolved by the system, is refused by name before any lookup', async () => {
    const { outbox, keys } = setUp();
    // Added by the operator's switch, sent by a dispatcher without it.
    await outbox.endpoints.create(
      { accountId: 'acct_1', url: `http://localhost:${port()}/by-name` },
      { allowPrivateNetworks: true },
    );
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    await createWebhookDispatcher({ outbox }).runOnce();
    expect(receivedAt('/by-name')).toEqual([]);
    expect((await outbox.deliveries({ accountId: 'acct_1' }))[0]?.lastError).toBe('refused_target');
  });

  it('an internal address literal stored before the check existed is refused, with no connection', async () => {
    const { outbox, keys } = setUp();
    await outbox.endpoints.create(
      { accountId: 'acct_1', url: `http://0x7f000001:${port()}/literal` },
      { allowPrivateNetworks: true },
    );
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    await createWebhookDispatcher({ outbox }).runOnce();
    expect(receivedAt('/literal')).toEqual([]);
    expect((await outbox.deliveries({ accountId: 'acct_1' }))[0]?.lastError).toBe('refused_target');
  });

  it("connects to the address the lookup answered and checked (allowPrivateNetworks on): the name's own DNS is never asked", async () => {
    const { outbox, keys } = setUp();
    const local = { allowPrivateNetworks: true };
    const { secret } = await outbox.endpoints.create(
      { accountId: 'acct_1', url: `http://pinned.example.com:${port()}/pinned` },
      local,
    );
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    const dispatcher = createWebhookDispatcher({
      outbox,
      ...local,
      lookup: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    expect(await dispatcher.runOnce()).toMatchObject({ delivered: 1 });
    const [got] = receivedAt('/pinned');
    expect(got?.headers.host).toBe(`pinned.example.com:${port()}`);
    await verifyWebhook({ secret, headers: got?.headers as never, body: got?.body as string });
  });

  it("a refused connection shows connection_failed in the account's log, never the address, port or errno", async () => {
    const { outbox, keys } = setUp();
    const closed = await startReceiver();
    const closedUrl = closed.url('/closed');
    await closed.close();
    const local = { allowPrivateNetworks: true };
    await outbox.endpoints.create({ accountId: 'acct_1', url: closedUrl }, local);
    await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'live' });
    const failures: AttemptFailure[] = [];
    await createWebhookDispatcher({ outbox, ...local, onAttemptFailed: (f) => failures.push(f) }).runOnce();
    const [delivery] = await outbox.deliveries({ accountId: 'acct_1' });
    expect(delivery).toMatchObject({ lastError: 'connection_failed', lastStatusCode: null });
    const { port: closedPort } = new URL(closedUrl);
    expect(JSON.stringify(delivery)).not.toMatch(
      new RegExp(`ECONNREFUSED|${closedPort}|127\\.0\\.0\\.1|network_error`),
    );
    expect(failures[0]?.error).toMatchObject({ code: 'ECONNREFUSED' });
  });
});

// A server that takes requests and never answers them, until `release`.
async function startSilent(): Promise<{ url: string; hits: () => number; release: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let hits = 0;
  const server: Server = createServer(() => {
    hits++;
  });
  server.on('connection', (s) => sockets.add(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: silentPort } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${silentPort}/silent`,
    hits: () => hits,
    release: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('a slow endpoint', () => {
  it("holds up its own deliveries only: another account's arrive while it hangs, each of them", async () => {
    const { outbox, keys } = setUp();
    const local = { allowPrivateNetworks: true };
    const silent = await startSilent();
    await outbox.endpoints.create({ accountId: 'acct_slow', url: silent.url }, local);
    await outbox.endpoints.create({ accountId: 'acct_fast', url: receiver.url('/fast') }, local);
    // The slow endpoint's attempts would time out only after a minute: far past anything awaited here.
    const dispatcher = createWebhookDispatcher({ outbox, ...local, timeoutMs: 60_000, leaseMs: 120_000 });
    dispatcher.start({ intervalMs: 20 });
    try {
      for (let i = 0; i < 3; i++) await keys.create({ accountId: 'acct_slow', name: `slow-${i}`, mode: 'live' });
      await keys.create({ accountId: 'acct_fast', name: 'first', mode: 'live' });
      await expect.poll(() => silent.hits(), { timeout: 10_000 }).toBeGreaterThan(0);
      await expect.poll(() => receivedAt('/fast').length, { timeout: 10_000 }).toBe(1);
      // Later events of the fast account, while the slow endpoint still hangs.
      await keys.create({ accountId: 'acct_fast', name: 'second', mode: 'live' });
      await keys.create({ accountId: 'acct_fast', name: 'third', mode: 'live' });
      await expect.poll(() => receivedAt('/fast').length, { timeout: 10_000 }).toBe(3);
      // At most two attempts at once to one endpoint: the third slow delivery waits its turn.
      await expect.poll(() => silent.hits(), { timeout: 10_000 }).toBe(2);
    } finally {
      await silent.release();
      await dispatcher.stop();
    }
    const slowLog = await outbox.deliveries({ accountId: 'acct_slow' });
    expect(slowLog.filter((d) => d.attempts > 0).map((d) => d.lastError)).toEqual(
      expect.arrayContaining(['connection_failed']),
    );
  });
});

describe('options of keygate/webhooks', () => {
  const outbox = new MemoryOutbox();
  const manager = new KeyManager({ store: new MemoryKeyStore({ outbox }) });
  it.each([
    [
      'createWebhookDispatcher',
      'allowPrivateNetwork',
      () => createWebhookDispatcher({ outbox, allowPrivateNetwork: true } as never),
    ],
    ['createWebhookDispatcher', 'timeout', () => createWebhookDispatcher({ outbox, timeout: 5_000 } as never)],
    [
      'createWebhookDispatcher',
      'retry.baseDelay',
      () => createWebhookDispatcher({ outbox, retry: { baseDelay: 1 } } as never),
    ],
    ['dispatcher.start', 'interval', () => createWebhookDispatcher({ outbox }).start({ interval: 10 } as never)],
    ['outboxEvents', 'type', () => outboxEvents(outbox, { type: ['credits.low'] } as never)],
    [
      'keyNotifications',
      'expiringDay',
      () => keyNotifications({ manager, outbox, accounts: () => [], expiringDay: [3] } as never),
    ],
  ])('%s refuses an unknown member (%s) as invalid_input naming it', (_where, field, make) => {
    expect(make).toThrow(expect.objectContaining({ code: 'invalid_input', field }));
  });

  it('verifyWebhook refuses a misspelt toleranceSec instead of keeping the default window', async () => {
    const err = await refusal(
      verifyWebhook({ secret: 'whsec_AAAA', headers: {}, body: '', toleranceSecs: 10 } as never),
    );
    expect(err).toMatchObject({ code: 'invalid_input', field: 'toleranceSecs' });
  });

  it('the dispatcher refuses a non-boolean allowPrivateNetworks', () => {
    expect(() => createWebhookDispatcher({ outbox, allowPrivateNetworks: 'yes' as never })).toThrow(
      expect.objectContaining({ field: 'allowPrivateNetworks' }),
    );
  });
});
