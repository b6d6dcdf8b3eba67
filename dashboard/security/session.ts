import { openSigned, randomId, type Signer, seal } from './crypto.js';

/** Name of the session cookie (scoped to the mount path by `Path`). */
export const SESSION_COOKIE = 'keygate_session';

const PURPOSE = 'session';
/** A session's last-seen time is refreshed (a new cookie) at most once per minute. */
export const SESSION_REFRESH_MS = 60_000;

/** A signed-in browser: which account, since when, last seen when. */
export interface Session {
  /** Random id: binds the CSRF token and names the session when it is ended. */
  readonly id: string;
  readonly accountId: string;
  /** Epoch milliseconds. */
  readonly issuedAt: number;
  /** Epoch milliseconds of the last request that refreshed the cookie. */
  readonly seenAt: number;
}

/** Session lifetimes, in milliseconds. */
export interface SessionTimes {
  readonly idleMs: number;
  readonly absoluteMs: number;
}

/** A new session for `accountId`, started now. */
export function newSession(accountId: string, now: number): Session {
  return { id: randomId(18), accountId, issuedAt: now, seenAt: now };
}

/** The cookie value of `session`: signed, so that the browser cannot change the account or the times. */
export function sealSession(signer: Signer, session: Session): Promise<string> {
  return seal(signer, PURPOSE, { s: session.id, a: session.accountId, i: session.issuedAt, t: session.seenAt });
}

/**
 * The session in a cookie value, or null when the cookie is absent, forged, idle for longer than
 * `idleMs` or older than `absoluteMs`. Whether it was ended by signing out is the ledger's to say.
 */
export async function openSession(
  signer: Signer,
  value: string | undefined,
  now: number,
  times: SessionTimes,
): Promise<Session | null> {
  if (!value) return null;
  const raw = (await openSigned(signer, PURPOSE, value)) as {
    s?: unknown;
    a?: unknown;
    i?: unknown;
    t?: unknown;
  } | null;
  if (!raw || typeof raw.s !== 'string' || typeof raw.a !== 'string') return null;
  if (typeof raw.i !== 'number' || typeof raw.t !== 'number') return null;
  if (now - raw.t > times.idleMs || now - raw.i > times.absoluteMs || raw.t > now + SESSION_REFRESH_MS) return null;
  return { id: raw.s, accountId: raw.a, issuedAt: raw.i, seenAt: raw.t };
}

/** The ledger id under which an ended session is recorded. */
export function endedSessionId(session: Session): string {
  return `session:${session.id}`;
}
