import { requireMethods } from './client-shape.js';
import { toEveryMaster } from './cluster.js';
import type { RedisClientLike, RedisSubscriberLike } from './store.js';

/**
 * The part of an ioredis client (`new Redis()` or `new Cluster()` from `ioredis` 5) that
 * {@link fromIoredis} uses, typed structurally so that keygate does not depend on ioredis.
 *
 * @example
 * const client: IoredisLike = new Cluster([{ host: '10.0.0.1', port: 6379 }]);
 */
export interface IoredisLike {
  /** True for a `Cluster`, false for a `Redis`. */
  readonly isCluster: boolean;
  /** `'wait'` before a lazy connection connects, `'ready'` once it can serve. */
  readonly status: string;
  call(command: string, ...args: string[]): Promise<unknown>;
  /** A `Cluster`'s connections to its masters. */
  nodes?(role: 'master'): IoredisLike[];
  /** `Redis.duplicate(options)` or `Cluster.duplicate(startupNodes, options)`. */
  duplicate(first?: unknown, second?: unknown): IoredisLike;
  connect(): Promise<unknown>;
  subscribe(...channels: string[]): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
  disconnect(): void;
}

/**
 * An ioredis client as the `client` of every Redis part of keygate (`RedisKeyStore`,
 * `RedisDashboardStore`, `RedisRateLimiter`, `RedisCreditLedger`, `RedisAttemptCounter`): a
 * standalone `Redis`, or a `Cluster`, which routes each command to the master owning its first key
 * (ioredis knows where EVALSHA's keys are); SCRIPT LOAD goes to every master. The change channel is
 * `client.duplicate()` subscribed with classic SUBSCRIBE (a cluster relays it to every node); after
 * the connection is ready again, the channel subscribes once more and then tells caches to resync.
 * An ioredis `Cluster` moves its subscriber to another node without an event: messages published
 * meanwhile are lost with no resync, so keep a `ttlMs` on caches over a cluster (the default does).
 * The client stays the caller's: it closes it.
 *
 * @example
 * const cluster = new Cluster([{ host: '10.0.0.1', port: 6379 }]);
 * const client = fromIoredis(cluster);
 * const store = new RedisKeyStore({ client }); // prefix '{keygate}:': one hash tag, one slot
 * const ledger = new RedisCreditLedger({ client }); // each account's keys in their own slot
 */
export function fromIoredis(client: IoredisLike): RedisClientLike {
  requireMethods(
    client,
    ['call', 'duplicate'],
    'client',
    'an ioredis client (new Redis() or new Cluster() from "ioredis")',
  );
  const cluster = client.isCluster === true;
  return {
    cluster,
    async sendCommand([name, ...args]) {
      if (!cluster || !toEveryMaster([name as string]) || !client.nodes) return client.call(name as string, ...args);
      const replies = await Promise.all(client.nodes('master').map((node) => node.call(name as string, ...args)));
      return replies[0];
    },
    duplicate: () =>
      subscriberOf(cluster ? client.duplicate([], { lazyConnect: true }) : client.duplicate({ lazyConnect: true })),
  };
}

function subscriberOf(sub: IoredisLike): RedisSubscriberLike {
  const listeners = new Map<string, (message: string, channel: string) => unknown>();
  const ready: (() => void)[] = [];
  let connected = false;
  sub.on('message', (channel, message) => listeners.get(channel)?.(message, channel));
  // ioredis emits 'ready' before it resubscribes: subscribe again (SUBSCRIBE is idempotent), then resync.
  sub.on('ready', () => {
    if (!connected || listeners.size === 0) return;
    sub.subscribe(...listeners.keys()).then(
      () => {
        for (const listener of ready) listener();
      },
      () => {},
    );
  });
  const wrapped: RedisSubscriberLike = {
    async connect() {
      await sub.connect();
      connected = true;
    },
    async subscribe(channel, listener) {
      listeners.set(channel, listener);
      await sub.subscribe(channel);
    },
    on(event: 'error' | 'ready', listener: ((err: Error) => void) & (() => void)) {
      if (event === 'error') sub.on('error', listener);
      else ready.push(listener);
      return wrapped;
    },
    destroy: () => sub.disconnect(),
  };
  return wrapped;
}
