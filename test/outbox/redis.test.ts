import { capabilityOf } from 'keygate';
import { RedisKeyStore } from 'keygate/redis';
import type { Outbox } from 'keygate/store-kit';
import { describeOutboxContract } from 'keygate/testing';
import { createClient } from 'redis';
import { createClient as createClient4 } from 'redis4';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REDIS_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const available = await serviceAvailable('Redis', REDIS_URL, 'KEYGATE_REDIS_URL');
let prefixes = 0;

describe.runIf(available).each([
  ['node-redis 6', createClient],
  ['node-redis 4.6', createClient4],
] as const)('over %s', (_, create) => {
  type Client = ReturnType<typeof createClient>;
  const clients: Client[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const client = (create as typeof createClient)({ url: REDIS_URL });
      client.on('error', () => {});
      await client.connect();
      clients.push(client as Client);
    }
  });
  afterAll(async () => {
    for (const c of clients.splice(0)) await c.quit();
  });

  describeOutboxContract(
    'RedisKeyStore',
    async () => {
      const prefix = `keygate:test:ob${RUN_ID}_${++prefixes}:`;
      const [a, b] = clients as [Client, Client];
      const outboxOf = (client: Client) => capabilityOf(new RedisKeyStore({ client, prefix }), 'outbox') as Outbox;
      return {
        outbox: outboxOf(a),
        peer: outboxOf(b),
        close: async () => {
          const keys = (await a.sendCommand(['KEYS', `${prefix}*`])) as string[];
          if (keys.length > 0) await a.sendCommand(['DEL', ...keys]);
        },
      };
    },
    { describe, it, expect, beforeEach, afterEach },
  );
});
