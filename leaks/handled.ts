// Whether a report of a key was acted on lately, so that a signed report captured on the way (or
// GitHub's own second report) does not act twice. The fact lives where the first report left it, in
// storage that exists already: the key's suspension, and the `key.leaked` audit entry every report writes.
import type { AuditActor, KeyManager, ManagedKey } from 'keygate';

/** How every suspension a report makes starts its reason: the key's own state says it was suspended as leaked. */
export const LEAK_REASON = 'leaked: found by GitHub secret scanning';

// Audit entries read per page, newest first, until one is older than the window.
const PAGE = 200;

const atOrAfter = (iso: string | null | undefined, sinceMs: number) =>
  typeof iso === 'string' && Date.parse(iso) >= sinceMs;

/**
 * Whether a report of `key` was acted on at or after `sinceMs` (epoch milliseconds, by the manager's
 * clock, which wrote the times): the key is suspended as leaked since then (`suspendedAt`, a reason
 * starting with {@link LEAK_REASON}), or its audit log holds a `key.leaked` entry of `actor` since
 * then. The audit entry is what remains after the owner resumed the key, and what a `notify` report
 * leaves. A store that keeps no audit log, or one that cannot be read, leaves the key's state alone
 * to decide: acting on a leak twice is better than not acting on it.
 */
export async function handledSince(
  manager: KeyManager,
  key: ManagedKey,
  sinceMs: number,
  actor: AuditActor,
): Promise<boolean> {
  const suspendedAsLeaked = key.status === 'suspended' && key.suspendedReason?.startsWith(LEAK_REASON) === true;
  if (suspendedAsLeaked && atOrAfter(key.suspendedAt, sinceMs)) return true;
  const query = { accountId: key.accountId, keyId: key.id, limit: PAGE };
  let before: string | undefined;
  try {
    for (;;) {
      const page = await manager.audit(before === undefined ? query : { ...query, before });
      for (const { at, action, actor: by } of page) {
        if (!atOrAfter(at, sinceMs)) return false;
        if (action === 'key.leaked' && by.type === actor.type && by.id === actor.id) return true;
      }
      if (page.length < PAGE) return false;
      before = page.at(-1)?.id;
    }
  } catch {
    return false;
  }
}
