// The ledger's invariants, checked during the run and at its end: `reconcile()` ok for every account
// (entries = balance + held) and no negative balance, at every check; and once the workers have
// stopped, every live 200 charged exactly once: what the ledger was given minus what it still has
// (balance + held) equals the live requests it answered 200, with no hold left open.
import type { CreditLedger } from 'keygate';
import type { Account } from './population.js';

export interface LedgerWatch {
  checks: number;
  lowestBalance: number;
  readonly failures: string[];
  /** One check of every account. */
  run(): Promise<void>;
}

export interface BillingRow {
  readonly account: string;
  readonly route: string;
  readonly served: number;
  readonly charged: number;
  readonly held: number;
  readonly ok: boolean;
}

/**
 * Watches `accounts` in `ledger`.
 *
 * @example
 * const watch = watchLedger(ledger, ACCOUNTS); await watch.run(); watch.failures // []
 */
export function watchLedger(ledger: CreditLedger, accounts: readonly Account[]): LedgerWatch {
  const watch: LedgerWatch = {
    checks: 0,
    lowestBalance: Number.POSITIVE_INFINITY,
    failures: [],
    async run() {
      for (const account of accounts) {
        const r = await ledger.reconcile(account.id);
        watch.checks++;
        watch.lowestBalance = Math.min(watch.lowestBalance, r.balance);
        if (!r.ok && watch.failures.length < 20) {
          watch.failures.push(`${account.id}: entries ${r.entries} != balance ${r.balance} + held ${r.held}`);
        }
        if (r.balance < 0 && watch.failures.length < 20) {
          watch.failures.push(`${account.id}: negative balance ${r.balance}`);
        }
      }
    },
  };
  return watch;
}

/**
 * Each account's billing once nothing is in flight, waiting up to `settleMs` for open holds to close.
 *
 * @example
 * const rows = await billing(ledger, ACCOUNTS, funding.toppedUp, traffic.tally.served, 10_000);
 */
export async function billing(
  ledger: CreditLedger,
  accounts: readonly Account[],
  toppedUp: ReadonlyMap<string, number>,
  served: ReadonlyMap<string, number>,
  settleMs: number,
): Promise<BillingRow[]> {
  const until = performance.now() + settleMs;
  for (;;) {
    const rows: BillingRow[] = [];
    for (const account of accounts) {
      const r = await ledger.reconcile(account.id);
      const charged = (toppedUp.get(account.id) ?? 0) - r.balance - r.held;
      const want = served.get(account.id) ?? 0;
      rows.push({
        account: account.id,
        route: account.route,
        served: want,
        charged,
        held: r.held,
        ok: r.ok && r.held === 0 && charged === want,
      });
    }
    if (rows.every((row) => row.held === 0) || performance.now() > until) return rows;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
