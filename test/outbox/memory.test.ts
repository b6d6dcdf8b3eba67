import { MemoryKeyStore } from 'keygate';
import { capabilityOf, type Outbox } from 'keygate/store-kit';
import { describeOutboxContract } from 'keygate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

describeOutboxContract(
  'MemoryKeyStore',
  async () => ({ outbox: capabilityOf(new MemoryKeyStore(), 'outbox') as Outbox }),
  { describe, it, expect, beforeEach, afterEach },
);
