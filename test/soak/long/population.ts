// Who the soak's traffic belongs to: five accounts (two billed request by request on the shared
// ledger, two through `LeasedCreditLedger`, one kept nearly dry so that it answers 402), each with a
// steady live key, a test key and a webhook endpoint; one live key per route with a tight rate limit
// (so some requests get 429). Key changes come on top of these (churn.ts).
import { generateKey, type KeyManager } from 'keygate';
import type { Outbox } from 'keygate/webhooks';
import type { Receiver } from './receiver.js';

export type Route = 'direct' | 'leased';

export interface Account {
  readonly id: string;
  readonly route: Route;
  /** Funded accounts are topped up before they run low; the dry one by a trickle. */
  readonly funded: boolean;
}

export interface SoakKey {
  readonly id: string;
  readonly secret: string;
  readonly account: Account;
  readonly live: boolean;
}

export interface Population {
  readonly accounts: readonly Account[];
  readonly steady: readonly SoakKey[];
  readonly limited: readonly SoakKey[];
  readonly dry: readonly SoakKey[];
  readonly test: readonly SoakKey[];
  /** Well-formed live keys no store holds (401 `invalid_api_key`). */
  readonly unknown: readonly string[];
}

export const ACCOUNTS: readonly Account[] = [
  { id: 'acct_direct_1', route: 'direct', funded: true },
  { id: 'acct_direct_2', route: 'direct', funded: true },
  { id: 'acct_leased_1', route: 'leased', funded: true },
  { id: 'acct_leased_2', route: 'leased', funded: true },
  { id: 'acct_dry', route: 'direct', funded: false },
];

/** The limited keys' rate limit: about half their share of the traffic gets 429. */
export const TIGHT_LIMIT = { limit: 5, windowMs: 2_000 };
export const PERMISSIONS = ['email:verify'];

/**
 * Creates the accounts' keys and webhook endpoints (pointing at the receiver).
 *
 * @example
 * const population = await populate(manager, outbox, receiver);
 */
export async function populate(manager: KeyManager, outbox: Outbox, receiver: Receiver): Promise<Population> {
  const make = async (
    account: Account,
    name: string,
    mode: 'live' | 'test',
    rateLimit: typeof TIGHT_LIMIT | null = null,
  ): Promise<SoakKey> => {
    const { secret, key } = await manager.create({
      accountId: account.id,
      name,
      mode,
      permissions: PERMISSIONS,
      rateLimit,
    });
    receiver.expect('key.created', key.id);
    return { id: key.id, secret, account, live: mode === 'live' };
  };
  const steady: SoakKey[] = [];
  const test: SoakKey[] = [];
  const limited: SoakKey[] = [];
  const dry: SoakKey[] = [];
  for (const account of ACCOUNTS) {
    const { secret } = await outbox.endpoints.create(
      { accountId: account.id, url: `${receiver.url}/hooks/${encodeURIComponent(account.id)}` },
      { allowPrivateNetworks: true },
    );
    receiver.setSecret(account.id, secret);
    if (!account.funded) {
      dry.push(await make(account, 'dry', 'live'));
      continue;
    }
    steady.push(await make(account, 'steady', 'live'));
    test.push(await make(account, 'sandbox', 'test'));
  }
  for (const route of ['direct', 'leased'] as const) {
    const account = ACCOUNTS.find((a) => a.route === route && a.funded) as Account;
    limited.push(await make(account, 'limited', 'live', TIGHT_LIMIT));
  }
  const unknown = Array.from({ length: 200 }, () => generateKey({ mode: 'live' }));
  return { accounts: ACCOUNTS, steady, limited, dry, test, unknown };
}
