import type { Context } from 'hono';
import type { KeyRateLimit, ManagedKey } from 'keygate';
import type { Dash, DashEnv } from '../context.js';

/** A key as the pages show it: the manager's view, with its rate limit when keys carry one. */
export type KeyView = ManagedKey & { rateLimit?: KeyRateLimit | null };

/**
 * The signed-in account's key named by the route's `:id`, or null (missing, or another account's:
 * the same answer, so that a page cannot tell whether another account's key exists).
 *
 * @example
 * const key = await ownKey(c, dash);
 * if (!key) return keyNotFound(c, dash);
 */
export async function ownKey(c: Context<DashEnv>, dash: Dash): Promise<KeyView | null> {
  const key = await dash.manager.get(c.req.param('id') ?? '');
  return key && key.accountId === c.get('account') ? key : null;
}
