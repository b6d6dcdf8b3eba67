import { MemoryKeyStore } from 'keygate';
import { describeKeyStoreContract } from 'keygate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

describeKeyStoreContract('MemoryKeyStore', async () => ({ store: new MemoryKeyStore() }), {
  describe,
  it,
  expect,
  beforeEach,
  afterEach,
});
