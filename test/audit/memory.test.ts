import { capabilityOf, MemoryKeyStore } from 'keygate';
import type { AuditLog } from 'keygate/store-kit';
import { describeAuditLogContract } from 'keygate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// One store per test: a MemoryKeyStore's audit log is its own.
describeAuditLogContract(
  'MemoryKeyStore',
  async () => ({ log: capabilityOf(new MemoryKeyStore(), 'audit') as AuditLog }),
  { describe, it, expect, beforeEach, afterEach },
);

describe('MemoryKeyStore audit log', () => {
  it('is its own per store: two stores in one process share no entries', async () => {
    const [one, two] = [new MemoryKeyStore(), new MemoryKeyStore()].map((s) => capabilityOf(s, 'audit') as AuditLog);
    await one?.append({
      at: new Date().toISOString(),
      accountId: 'acct_1',
      action: 'key.created',
      actor: { type: 'api' },
    });
    expect(await two?.list({ accountId: 'acct_1' })).toEqual([]);
    expect(await one?.list({ accountId: 'acct_1' })).toHaveLength(1);
  });
});
