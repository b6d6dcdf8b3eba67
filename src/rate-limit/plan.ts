import type { KeyRateLimit, PublicKey, RateLimit } from '../types.js';
import { namedLimits } from './named.js';

// Which limits a request is counted against when there is more than one (a key's named limits, an
// account's limits), in the order they are counted: shortest window first, then smallest limit. So a
// request refused by a short limit (a burst) counts against none of the longer ones (a month's
// quota), and one refused by a long limit has counted only in windows shorter than it.

/** One limit of a {@link Plan}: what is counted, and under which subject. @internal */
export interface PlannedLimit {
  readonly name: string;
  readonly scope: 'key' | 'account';
  readonly limit: number;
  readonly windowMs: number;
  /** What the limiter is asked to count under: `{ limit, windowMs }`, built once. */
  readonly policy: RateLimit;
  /** The limiter subject after the key id (`scope: 'key'`) or the account's prefix: `:name`, or '' for a key's single limit. */
  readonly suffix: string;
}

/** The limits of one request, in counting order. @internal */
export type Plan = readonly PlannedLimit[];

function planned(value: KeyRateLimit, scope: 'key' | 'account'): PlannedLimit[] {
  const single = !Array.isArray(value);
  return namedLimits(value, scope === 'key' ? 'default' : 'account').map(({ name, limit, windowMs }) => ({
    name,
    scope,
    limit,
    windowMs,
    policy: Object.freeze({ limit, windowMs }),
    suffix: single && scope === 'key' ? '' : `:${name}`,
  }));
}

const byWindow = (a: PlannedLimit, b: PlannedLimit) => a.windowMs - b.windowMs || a.limit - b.limit;

// Plans by the key's limit object, then by the account's (limit objects are frozen and shared between
// keys that hold equal ones, so a plan is built once per distinct pair, not per request).
const plans = new WeakMap<object, WeakMap<object, Plan> | Plan>();
const NONE = {};

/**
 * The plan for a key's limit (its own or the default; null: none) and its account's (null: none).
 * Built once per pair of limit objects and kept.
 *
 * @example
 * planOf([{ name: 'burst', limit: 10, windowMs: 1000 }], { limit: 1000, windowMs: 86_400_000 });
 */
export function planOf(own: KeyRateLimit | null, account: KeyRateLimit | null): Plan {
  const first = own ?? NONE;
  const second = account ?? NONE;
  let inner = plans.get(first) as WeakMap<object, Plan> | undefined;
  if (inner === undefined) {
    inner = new WeakMap();
    plans.set(first, inner);
  }
  let plan = inner.get(second);
  if (plan === undefined) {
    const all = [...(own ? planned(own, 'key') : []), ...(account ? planned(account, 'account') : [])];
    plan = Object.freeze(all.sort(byWindow));
    inner.set(second, plan);
  }
  return plan;
}

/**
 * The limiter subject of `limit` for `key`: the key id (a key's single limit, counted as it always
 * was), `<key id>:<name>`, or `account:<mode>:<account id>:<name>` for a limit shared by the account's
 * keys of one mode. Key ids never hold `:`, so no subject of one kind can be another's.
 *
 * @example
 * subjectOf(key, plan[0]); // 'key_3xY…:burst'
 */
export function subjectOf(key: PublicKey, limit: PlannedLimit): string {
  if (limit.scope === 'key') return limit.suffix === '' ? key.id : key.id + limit.suffix;
  return `account:${key.mode}:${key.accountId}${limit.suffix}`;
}
