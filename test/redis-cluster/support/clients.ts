// Clients of the test cluster, opened on demand and closed together, in the three shapes keygate takes:
// node-redis's createCluster, ioredis's Cluster, and a standalone ioredis Redis (on the shared server).

import { Cluster, Redis } from 'ioredis';
import { fromIoredis, fromNodeRedisCluster, type RedisClientLike } from 'keygate/redis';
import { createCluster } from 'redis';

/** A client for keygate and its raw form, for tests that look at the keys themselves. */
export interface Opened<T> {
  client: RedisClientLike;
  raw: T;
}

/** Opens clients and closes every one it opened. */
export interface Clients<T> {
  open(): Promise<Opened<T>>;
  closeAll(): Promise<void>;
}

const rootNodes = (urls: readonly string[]) => urls.map((url) => ({ url }));

const makeCluster = (urls: readonly string[]) =>
  createCluster({
    rootNodes: rootNodes(urls),
    defaults: { socket: { connectTimeout: 5_000, reconnectStrategy: () => 100 } },
  });

export type NodeRedisCluster = ReturnType<typeof makeCluster>;

/** node-redis cluster clients over the masters at `urls()` (read when a client opens). */
export function nodeRedisClusters(urls: () => readonly string[]): Clients<NodeRedisCluster> {
  const opened: NodeRedisCluster[] = [];
  return {
    async open() {
      const raw = makeCluster(urls());
      // A dropped node connection is reported here; node-redis reconnects by itself.
      raw.on('error', () => {});
      opened.push(raw);
      await raw.connect();
      return { client: fromNodeRedisCluster(raw), raw };
    },
    async closeAll() {
      for (const raw of opened.splice(0)) raw.destroy();
    },
  };
}

/** ioredis `Cluster` clients over the masters at `urls()`. */
export function ioredisClusters(urls: () => readonly string[]): Clients<Cluster> {
  const opened: Cluster[] = [];
  return {
    async open() {
      const nodes = urls().map((url) => ({ host: '127.0.0.1', port: Number(new URL(url).port) }));
      const raw = new Cluster(nodes, { lazyConnect: true });
      raw.on('error', () => {});
      opened.push(raw);
      await raw.connect();
      return { client: fromIoredis(raw), raw };
    },
    async closeAll() {
      for (const raw of opened.splice(0)) raw.disconnect();
    },
  };
}

/** Standalone ioredis clients of the server at `url`. */
export function ioredisClients(url: string): Clients<Redis> {
  const opened: Redis[] = [];
  return {
    async open() {
      const raw = new Redis(url, { lazyConnect: true });
      raw.on('error', () => {});
      opened.push(raw);
      await raw.connect();
      return { client: fromIoredis(raw), raw };
    },
    async closeAll() {
      for (const raw of opened.splice(0)) raw.disconnect();
    },
  };
}
