import { retryAfterSeconds } from '../rate-limit/headers.js';
import type { AttemptReservation, AttemptThrottle } from '../throttle/types.js';
import type { KeyStore } from '../types.js';
import { DENIALS } from '../vocabulary/denials.js';
import type { AuthFailure, AuthRequest, AuthResult } from '../vocabulary/result.js';
import { lookUp, screen } from './decide.js';
import type { ResolvedOptions } from './options.js';

// The checks with failed-attempt throttling. A request whose key must be looked up reserves an attempt
// first, so concurrent bad keys cannot all reach the store before one of them is counted; a request
// decided without the store is checked, and counted when it fails. A throttle that throws counts as no
// throttle: it may slow clients down, never let one in.

function tooMany(waitMs: number): AuthFailure {
  const d = DENIALS.too_many_failed_attempts;
  return {
    ok: false,
    status: d.status,
    code: 'too_many_failed_attempts',
    message: d.detail,
    retryAfterSeconds: retryAfterSeconds(waitMs),
  };
}

const UNTHROTTLED: AttemptReservation = Object.freeze({ waitMs: 0, settle() {} });

async function reserveSafely(throttle: AttemptThrottle, ip: AuthRequest['ip']): Promise<AttemptReservation> {
  try {
    return await throttle.reserve(ip);
  } catch {
    return UNTHROTTLED;
  }
}

async function reservedLookUp(
  request: AuthRequest,
  store: KeyStore,
  o: ResolvedOptions,
  throttle: AttemptThrottle,
  hash: string,
): Promise<AuthResult> {
  const reservation = await reserveSafely(throttle, request.ip);
  if (reservation.waitMs > 0) return tooMany(reservation.waitMs);
  const result = await lookUp(request, store, o, hash);
  try {
    reservation.settle(result.status === 401);
  } catch {}
  return result;
}

/** {@link screen}, then a reserved lookup or a check of the result decided without the store. */
export async function throttled(
  request: AuthRequest,
  store: KeyStore,
  o: ResolvedOptions,
  throttle: AttemptThrottle,
): Promise<AuthResult> {
  const screened = await screen(request, store, o);
  if (typeof screened === 'string') return reservedLookUp(request, store, o, throttle, screened);
  let waitMs = 0;
  try {
    waitMs = await throttle.check(request.ip);
  } catch {}
  if (waitMs > 0) return tooMany(waitMs);
  if (screened.status === 401) {
    try {
      await throttle.fail(request.ip);
    } catch {}
  }
  return screened;
}
