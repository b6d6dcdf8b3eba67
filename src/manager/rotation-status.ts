import type { ApiKeyRecord } from '../types.js';
import type { KeyActivity } from '../vocabulary/usage-store.js';

/**
 * Default quiet period of the rotation confirm step, in milliseconds: 15 minutes.
 *
 * @example
 * await keys.revoke(oldId, { quietForMs: DEFAULT_QUIET_FOR_MS });
 */
export const DEFAULT_QUIET_FOR_MS = 15 * 60_000;

/** Where a rotation stands, from the old key's side. See `KeyManager.rotationStatus`. */
export interface RotationStatus {
  readonly oldKeyId: string;
  readonly newKeyId: string;
  /** When the successor was created (ISO-8601). */
  readonly rotatedAt: string;
  /** `created` (new key unused), `switched` (new key used, old still busy), `confirmed` (safe to revoke), `revoked`. */
  readonly step: 'created' | 'switched' | 'confirmed' | 'revoked';
  /** The new key has been used since the rotation. */
  readonly newKeyUsed: boolean;
  readonly newKeyLastUsedAt: string | null;
  readonly oldKeyLastUsedAt: string | null;
  /** Milliseconds since the old key was last used (or since the rotation, if it was not used after it). */
  readonly oldKeyQuietForMs: number;
  /** Quiet period required, in milliseconds (the `quietForMs` asked for). */
  readonly quietForMs: number;
  /** The new key is active and has carried traffic, and the old key has been quiet for the whole quiet period. */
  readonly safeToRevoke: boolean;
}

/** What {@link rotationStatusOf} needs: both records, their activity, the time and the quiet period. */
export interface RotationFacts {
  readonly old: ApiKeyRecord;
  readonly next: ApiKeyRecord;
  readonly oldActivity: KeyActivity | null;
  readonly newActivity: KeyActivity | null;
  /** Epoch milliseconds. */
  readonly now: number;
  readonly quietForMs: number;
}

/** The confirm step of a rotation, computed from its facts; no I/O. */
export function rotationStatusOf(facts: RotationFacts): RotationStatus {
  const { old, next, oldActivity, newActivity, now, quietForMs } = facts;
  const rotatedAt = next.createdAt;
  const rotatedMs = Date.parse(rotatedAt);
  const newKeyUsed = !!newActivity && Date.parse(newActivity.lastUsedAt) >= rotatedMs;
  const oldLast = oldActivity ? Date.parse(oldActivity.lastUsedAt) : 0;
  const oldKeyQuietForMs = Math.max(0, now - Math.max(oldLast, rotatedMs));
  // Never safe while the successor cannot carry the traffic (suspended, or revoked itself).
  const safeToRevoke = newKeyUsed && oldKeyQuietForMs >= quietForMs && next.status === 'active';
  const step = old.status === 'revoked' ? 'revoked' : safeToRevoke ? 'confirmed' : newKeyUsed ? 'switched' : 'created';
  return {
    oldKeyId: old.id,
    newKeyId: next.id,
    rotatedAt,
    step,
    newKeyUsed,
    newKeyLastUsedAt: newActivity?.lastUsedAt ?? null,
    oldKeyLastUsedAt: oldActivity?.lastUsedAt ?? null,
    oldKeyQuietForMs,
    quietForMs,
    safeToRevoke,
  };
}
