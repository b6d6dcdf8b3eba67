// Key changes at a steady rate, through `KeyManager`, on a pool of live keys of the funded accounts
// that also receive traffic: create (and revoke the oldest, so the pool keeps its size), update (name,
// allow list, rate limit), suspend, resume, rotate (the old key ends at once). Each change must reach
// the receiver as a webhook. A key taken out of service (revoked, suspended, rotated away) is
// "blocked" from the moment the call returned: a request sent later than the revocation bound after
// that must not be allowed (traffic.ts checks it), so retired keys keep getting a little traffic.
import type { KeyManager } from 'keygate';
import { type Account, PERMISSIONS, type SoakKey } from './population.js';
import type { Receiver } from './receiver.js';

const POOL_SIZE = 12;
const RETIRED_KEPT = 6;

export interface ChurnKey extends SoakKey {
  /** `performance.now()` when the call that took it out of service returned; unset while it may serve. */
  blockedSince?: number;
  suspended: boolean;
}

export interface Churn {
  /** Keys in service (some suspended). */
  readonly pool: ChurnKey[];
  /** The latest keys taken out for good (revoked, or rotated away). */
  readonly retired: ChurnKey[];
  readonly counts: Map<string, number>;
  /** Keys created since the start (for the tables that keep a row per key). */
  created: number;
  /** One change. */
  step(): Promise<void>;
}

const ACTIONS = ['create', 'update', 'suspend', 'resume', 'rotate', 'update'] as const;

/**
 * The churn pool, filled with its first keys.
 *
 * @example
 * const churn = await startChurn(manager, accounts, receiver);
 * await churn.step();
 */
export async function startChurn(
  manager: KeyManager,
  accounts: readonly Account[],
  receiver: Receiver,
): Promise<Churn> {
  const funded = accounts.filter((a) => a.funded);
  const counts = new Map<string, number>();
  let turn = 0;
  let serial = 0;
  const count = (action: string) => counts.set(action, (counts.get(action) ?? 0) + 1);

  async function create(): Promise<ChurnKey> {
    const account = funded[serial % funded.length] as Account;
    const { secret, key } = await manager.create({
      accountId: account.id,
      name: `churn ${++serial}`,
      mode: 'live',
      permissions: PERMISSIONS,
    });
    receiver.expect('key.created', key.id);
    churn.created++;
    count('create');
    return { id: key.id, secret, account, live: true, suspended: false };
  }

  function retire(key: ChurnKey): void {
    key.blockedSince = performance.now();
    churn.pool.splice(churn.pool.indexOf(key), 1);
    churn.retired.push(key);
    if (churn.retired.length > RETIRED_KEPT) churn.retired.shift();
  }

  const pick = (suspended: boolean) => {
    const candidates = churn.pool.filter((k) => k.suspended === suspended);
    return candidates[turn % Math.max(1, candidates.length)];
  };

  const churn: Churn = {
    pool: [],
    retired: [],
    counts,
    created: 0,
    async step() {
      const action = ACTIONS[turn++ % ACTIONS.length] as (typeof ACTIONS)[number];
      if (action === 'create') {
        churn.pool.push(await create());
        const oldest = churn.pool[0] as ChurnKey;
        await manager.revoke(oldest.id);
        receiver.expect('key.revoked', oldest.id);
        count('revoke');
        retire(oldest);
      } else if (action === 'update') {
        const key = pick(false) ?? pick(true);
        if (!key) return;
        const tight = turn % 4 === 0;
        await manager.update(key.id, {
          name: `churn ${key.id.slice(-6)} ${turn}`,
          allowedIps: tight ? ['127.0.0.0/8', '::1/128'] : [],
          rateLimit: tight ? { limit: 50, windowMs: 1_000 } : null,
        });
        receiver.expect('key.updated', key.id);
        count('update');
      } else if (action === 'suspend') {
        const key = pick(false);
        if (!key) return;
        await manager.suspend(key.id, { reason: 'soak' });
        key.suspended = true;
        key.blockedSince = performance.now();
        receiver.expect('key.suspended', key.id);
        count('suspend');
      } else if (action === 'resume') {
        const key = pick(true);
        if (!key) return;
        // Allowed again from the moment the call starts.
        key.blockedSince = undefined;
        key.suspended = false;
        await manager.resume(key.id);
        receiver.expect('key.resumed', key.id);
        count('resume');
      } else {
        const key = pick(false);
        if (!key) return;
        const { secret, key: next } = await manager.rotate(key.id, { graceMs: 0 });
        receiver.expect('key.rotated', key.id);
        churn.created++;
        count('rotate');
        retire(key);
        churn.pool.push({ id: next.id, secret, account: key.account, live: true, suspended: false });
      }
    },
  };
  for (let i = 0; i < POOL_SIZE; i++) churn.pool.push(await create());
  return churn;
}
