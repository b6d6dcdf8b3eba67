import { MemoryKeyStore } from 'keygate';
import { describeKeyStoreContract } from 'keygate/testing';
import { MemoryOutbox } from 'keygate/webhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const t = { describe, it, expect, beforeEach, afterEach };

describeKeyStoreContract('MemoryKeyStore', async () => ({ store: new MemoryKeyStore() }), t, { auditedWrites: true });
describeKeyStoreContract(
  'MemoryKeyStore with an outbox',
  async () => ({ store: new MemoryKeyStore({ outbox: new MemoryOutbox() }) }),
  t,
  { outbox: true, auditedWrites: true },
);
