import { afterAll, beforeAll, describe } from 'vitest';
import { RUN_ID } from '../stores/support/services.js';
import { clusterAvailable, type RedisCluster, startRedisCluster } from '../support/redis-cluster.js';
import { nodeRedisClusters } from './support/clients.js';
import { describeRedisContracts } from './support/contracts.js';

const available = await clusterAvailable();
let cluster: RedisCluster | undefined;
const clients = nodeRedisClusters(() => cluster?.urls ?? []);

beforeAll(async () => {
  if (available) cluster = await startRedisCluster();
});

afterAll(async () => {
  await clients.closeAll();
  await cluster?.stop();
});

let prefixes = 0;

describe.skipIf(!available)('on a three-master Redis Cluster through node-redis', () => {
  describeRedisContracts('node-redis createCluster', clients, {
    // Each fixture its own hash tag: the tests' data lands on every master, one slot per fixture.
    storePrefix: () => `{keygate:test:${RUN_ID}:${++prefixes}}:`,
    prefix: `keygate:test:${RUN_ID}:`,
    parts: ['store', 'limiter', 'ledger', 'dashboard', 'audit', 'outbox'],
  });
});
