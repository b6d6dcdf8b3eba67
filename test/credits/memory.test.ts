import { MemoryCreditLedger } from 'keygate';
import { describeCreditLedgerContract } from 'keygate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

describeCreditLedgerContract('MemoryCreditLedger', async () => ({ ledger: new MemoryCreditLedger() }), {
  describe,
  it,
  expect,
  beforeEach,
  afterEach,
});
