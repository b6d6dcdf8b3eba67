import { afterAll, beforeAll, describe } from 'vitest';
import { REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { clusterAvailable, type RedisCluster, startRedisCluster } from '../support/redis-cluster.js';
import { ioredisClients, ioredisClusters } from './support/clients.js';
import { describeRedisContracts } from './support/contracts.js';

const available = await clusterAvailable();
const standalone = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
let cluster: RedisCluster | undefined;
const clusters = ioredisClusters(() => cluster?.urls ?? []);
const singles = ioredisClients(REDIS_URL);
const STANDALONE_PREFIX = `keygate:test:${RUN_ID}:io:`;

beforeAll(async () => {
  if (available) cluster = await startRedisCluster();
});

afterAll(async () => {
  await clusters.closeAll();
  await cluster?.stop();
  if (standalone) {
    const { raw } = await singles.open();
    const keys = await raw.keys(`${STANDALONE_PREFIX}*`);
    for (let i = 0; i < keys.length; i += 500) await raw.del(...keys.slice(i, i + 500));
  }
  await singles.closeAll();
});

let prefixes = 0;

describe.skipIf(!available)('on a three-master Redis Cluster through ioredis', () => {
  describeRedisContracts('an ioredis Cluster', clusters, {
    storePrefix: () => `{keygate:test:${RUN_ID}:${++prefixes}}:`,
    prefix: `keygate:test:${RUN_ID}:`,
    parts: ['store', 'limiter', 'ledger'],
  });
});

describe.skipIf(!standalone)('on one Redis server through ioredis', () => {
  describeRedisContracts('an ioredis Redis', singles, {
    storePrefix: () => `${STANDALONE_PREFIX}${++prefixes}:`,
    prefix: STANDALONE_PREFIX,
    parts: ['store', 'limiter', 'ledger', 'dashboard', 'audit', 'outbox'],
  });
});
