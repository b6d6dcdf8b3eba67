import { requireMethods } from './client-shape.js';
import type { RedisClientLike, RedisSubscriberLike } from './store.js';

/**
 * The part of a node-redis cluster (`createCluster()` from `redis`, v4.6 to v6) that
 * {@link fromNodeRedisCluster} uses, typed structurally so that `redis` stays an optional peer.
 *
 * @example
 * const cluster: NodeRedisClusterLike = await createCluster({ rootNodes: [{ url: 'redis://10.0.0.1:6379' }] }).connect();
 */
export interface NodeRedisClusterLike {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  /** The cluster's masters, as the client last saw them. */
  readonly masters: readonly unknown[];
  /** The connection to one of `masters` (what keygate uses of it: `sendCommand`). */
  nodeClient(
    node: unknown,
  ): { sendCommand(args: string[]): Promise<unknown> } | Promise<{ sendCommand(args: string[]): Promise<unknown> }>;
  /** A second cluster client with the same options, not yet connected: the change channel's. */
  duplicate(): NodeRedisClusterSubscriberLike;
}

/**
 * What the key store's change channel uses of `cluster.duplicate()`.
 *
 * @example
 * const subscriber: NodeRedisClusterSubscriberLike = cluster.duplicate();
 */
export interface NodeRedisClusterSubscriberLike extends Omit<RedisSubscriberLike, 'on'> {
  on(event: 'error', listener: (err: Error) => void): unknown;
  /** node-redis emits it when a node's connection, the pub/sub one included, is ready again. */
  on(event: 'node-ready', listener: () => void): unknown;
}

/**
 * The key a cluster routes a command by: the first key of EVAL/EVALSHA, else the command's first
 * argument (every other command keygate sends names its key first), none for a script without keys.
 *
 * @example
 * routingKey(['EVALSHA', sha, '2', 'a', 'b', 'x']) // 'a'
 * routingKey(['HGETALL', 'k'])                      // 'k'
 */
export function routingKey(args: readonly string[]): string | undefined {
  const name = args[0]?.toUpperCase();
  if (name === 'EVAL' || name === 'EVALSHA') return Number(args[2]) > 0 ? args[3] : undefined;
  return args[1];
}

/**
 * Whether a command goes to every master: SCRIPT (LOAD, FLUSH, EXISTS).
 *
 * @example
 * toEveryMaster(['SCRIPT', 'LOAD', 'return 1']) // true
 * toEveryMaster(['GET', 'k'])                   // false
 */
export function toEveryMaster(args: readonly string[]): boolean {
  return args[0]?.toUpperCase() === 'SCRIPT';
}

/**
 * A node-redis cluster client (`createCluster()` from `redis`, v4.6 to v6) as the `client` of every
 * Redis part of keygate (`RedisKeyStore`, `RedisDashboardStore`, `RedisRateLimiter`,
 * `RedisCreditLedger`, `RedisAttemptCounter`). Each command goes to the master that owns its first key
 * (node-redis follows MOVED and ASK by itself); SCRIPT LOAD goes to every master, so each script is
 * cached on every node before its first EVALSHA (a node added later gets it through the runner's EVAL
 * on NOSCRIPT). The change channel is a second cluster client (`cluster.duplicate()`), subscribed with
 * classic SUBSCRIBE, which a cluster relays to every node; its caches resync whenever one of its
 * node connections is ready again. The cluster stays the caller's: connect it before, close it after.
 *
 * @example
 * const cluster = await createCluster({ rootNodes: [{ url: 'redis://10.0.0.1:6379' }] }).connect();
 * const client = fromNodeRedisCluster(cluster);
 * const store = new RedisKeyStore({ client }); // prefix '{keygate}:': one hash tag, one slot
 * const limiter = new RedisRateLimiter({ client }); // one key per request: spread over the masters
 */
export function fromNodeRedisCluster(cluster: NodeRedisClusterLike): RedisClientLike {
  requireMethods(
    cluster,
    ['sendCommand', 'nodeClient'],
    'cluster',
    'a node-redis cluster client (createCluster() from "redis")',
  );
  return {
    cluster: true,
    async sendCommand(args) {
      if (!toEveryMaster(args)) return cluster.sendCommand(routingKey(args), false, args);
      const replies = await Promise.all(
        cluster.masters.map(async (master) => (await cluster.nodeClient(master)).sendCommand(args)),
      );
      return replies[0];
    },
    duplicate: () => subscriberOf(cluster.duplicate()),
  };
}

function subscriberOf(sub: NodeRedisClusterSubscriberLike): RedisSubscriberLike {
  const wrapped: RedisSubscriberLike = {
    connect: () => sub.connect(),
    subscribe: (channel, listener) => sub.subscribe(channel, listener),
    on(event: 'error' | 'ready', listener: ((err: Error) => void) & (() => void)) {
      if (event === 'error') sub.on('error', listener);
      else sub.on('node-ready', listener);
      return wrapped;
    },
  };
  if (typeof sub.destroy === 'function') wrapped.destroy = () => sub.destroy?.();
  else wrapped.disconnect = () => sub.disconnect?.() ?? Promise.resolve();
  return wrapped;
}
