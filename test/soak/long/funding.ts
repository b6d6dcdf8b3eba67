// Periodic top-ups: a funded account is topped up once its balance falls below a floor (its leased
// slices hold up to a few thousand credits, so the floor is well above that); the dry account gets a
// trickle, less than its traffic spends. Every top-up carries a fresh reference; `toppedUp` is what
// the ledger was given per account, from which the checks derive what it charged.
import type { CreditLedger } from 'keygate';
import type { Account } from './population.js';

const FLOOR = 20_000;
const TOP_UP = 50_000;
const TRICKLE = 10;

export interface Funding {
  /** Credits given per account. */
  readonly toppedUp: Map<string, number>;
  topUps: number;
  /** One round: tops up whoever needs it. */
  round(): Promise<void>;
}

/**
 * The run's funding, with every account's first top-up done.
 *
 * @example
 * const funding = await startFunding(ledger, ACCOUNTS, 'soak-r1');
 * setInterval(() => funding.round(), 5_000);
 */
export async function startFunding(ledger: CreditLedger, accounts: readonly Account[], run: string): Promise<Funding> {
  const toppedUp = new Map<string, number>();
  let serial = 0;
  const funding: Funding = {
    toppedUp,
    topUps: 0,
    async round() {
      for (const account of accounts) {
        const amount = account.funded ? ((await ledger.balance(account.id)) < FLOOR ? TOP_UP : 0) : TRICKLE;
        if (amount === 0) continue;
        await ledger.topUp(account.id, amount, { reference: `${run}-${++serial}` });
        toppedUp.set(account.id, (toppedUp.get(account.id) ?? 0) + amount);
        funding.topUps++;
      }
    },
  };
  await funding.round();
  return funding;
}
