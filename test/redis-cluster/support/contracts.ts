// keygate/testing's contract suites over one kind of Redis client, for each part of the Redis backend.

import { capabilityOf } from 'keygate';
import {
  type RedisClientLike,
  RedisCreditLedger,
  RedisDashboardStore,
  RedisKeyStore,
  RedisRateLimiter,
} from 'keygate/redis';
import type { AuditLog, Outbox } from 'keygate/store-kit';
import {
  describeAuditLogContract,
  describeCreditLedgerContract,
  describeDashboardStoreContract,
  describeKeyStoreContract,
  describeOutboxContract,
  describeRateLimiterContract,
} from 'keygate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clients } from './clients.js';

const t = { describe, it, expect, beforeEach, afterEach };

export type Part = 'store' | 'limiter' | 'ledger' | 'dashboard' | 'audit' | 'outbox';

export interface ContractsOptions {
  /** A fresh key-store prefix for one fixture (with a hash tag on a cluster). */
  storePrefix(): string;
  /** The limiter's and the ledger's prefix (no hash tag: their keys spread over the masters). */
  prefix: string;
  parts: readonly Part[];
}

/** Runs the contract suite of each part in `parts` with stores over clients from `clients`. */
export function describeRedisContracts(name: string, clients: Clients<unknown>, options: ContractsOptions): void {
  const { parts, storePrefix, prefix } = options;
  // Two connections, as two processes would hold them, opened on first use.
  let pair: Promise<[RedisClientLike, RedisClientLike]> | undefined;
  const two = () => {
    pair ??= Promise.all([clients.open(), clients.open()]).then(([a, b]) => [a.client, b.client]);
    return pair;
  };

  if (parts.includes('store')) {
    describeKeyStoreContract(
      `RedisKeyStore over ${name}`,
      async () => {
        const [a, b] = await two();
        const prefix = storePrefix();
        const store = new RedisKeyStore({ client: a, prefix });
        return { store, peer: new RedisKeyStore({ client: b, prefix }), close: async () => store.close() };
      },
      t,
      { channel: true, auditedWrites: true },
    );
  }
  if (parts.includes('limiter')) {
    describeRateLimiterContract(
      `RedisRateLimiter over ${name}`,
      async () => ({ limiter: new RedisRateLimiter({ client: (await two())[0], prefix, timeoutMs: 10_000 }) }),
      t,
    );
  }
  if (parts.includes('ledger')) {
    describeCreditLedgerContract(
      `RedisCreditLedger over ${name}`,
      async () => {
        const [a, b] = await two();
        return {
          ledger: new RedisCreditLedger({ client: a, prefix, timeoutMs: 10_000 }),
          peer: new RedisCreditLedger({ client: b, prefix, timeoutMs: 10_000 }),
        };
      },
      t,
      // A hold's keys go when it closes: `prune` finds nothing to delete.
      { prunesClosedHolds: false },
    );
  }
  if (parts.includes('dashboard')) {
    describeDashboardStoreContract(
      `RedisDashboardStore over ${name}`,
      async () => {
        const [a, b] = await two();
        const prefix = storePrefix();
        const keys = new RedisKeyStore({ client: a, prefix });
        return {
          keys,
          store: new RedisDashboardStore({ client: a, prefix }),
          peer: new RedisDashboardStore({ client: b, prefix }),
          close: async () => keys.close(),
        };
      },
      t,
    );
  }
  if (parts.includes('audit')) {
    describeAuditLogContract(
      `RedisKeyStore's audit log over ${name}`,
      async () => {
        const [a, b] = await two();
        const prefix = storePrefix();
        const logOf = (client: RedisClientLike) =>
          capabilityOf(new RedisKeyStore({ client, prefix }), 'audit') as AuditLog;
        return { log: logOf(a), peer: logOf(b) };
      },
      t,
    );
  }
  if (parts.includes('outbox')) {
    describeOutboxContract(
      `RedisKeyStore's outbox over ${name}`,
      async () => {
        const [a, b] = await two();
        const prefix = storePrefix();
        const outboxOf = (client: RedisClientLike) =>
          capabilityOf(new RedisKeyStore({ client, prefix }), 'outbox') as Outbox;
        return { outbox: outboxOf(a), peer: outboxOf(b) };
      },
      t,
    );
  }
}
