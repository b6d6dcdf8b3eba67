import { MemoryCreditLedger } from 'keygate';
import { describeCreditLedgerContract } from 'keygate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// It forgets a hold when it closes: `prune` finds nothing to delete.
describeCreditLedgerContract(
  'MemoryCreditLedger',
  async () => ({ ledger: new MemoryCreditLedger() }),
  { describe, it, expect, beforeEach, afterEach },
  { prunesClosedHolds: false },
);
