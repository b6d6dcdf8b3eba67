import { type InputIssue, InvalidInputError, KeyManager } from 'keygate';
import { quote } from 'keygate/store-kit';
import { normalizeBasePath, under } from '../paths.js';
import { createSigner, openSigned, randomId, type Signer, seal, secretBytes } from './crypto.js';

/**
 * How long a sign-in link stays valid, in milliseconds: 15 minutes.
 *
 * @example
 * await createSignInLink({ secret, accountId: 'acct_1', baseUrl, ttlMs: SIGN_IN_LINK_TTL_MS / 3 }); // 5 minutes
 */
export const SIGN_IN_LINK_TTL_MS = 15 * 60_000;

const PURPOSE = 'sign-in';

/** Options of {@link createSignInLink}. */
export interface SignInLinkOptions {
  /** The dashboard secret (at least 32 bytes): the same value the dashboard was given. */
  secret: string | Uint8Array;
  /** The account the link signs in to. */
  accountId: string;
  /** Where the dashboard is reached: an origin such as `'https://example.com'` (no path; the path is `basePath`). */
  baseUrl: string;
  /** Where the dashboard is mounted. Default `'/'`. */
  basePath?: string;
  /** How long the link is valid, in milliseconds. Default `900_000` (15 minutes). */
  ttlMs?: number;
  /** Current time in epoch milliseconds. Default `Date.now`. */
  clock?: () => number;
}

/**
 * An account id as `KeyManager` accepts it (`KeyManager.check`: 1-200 characters, at least one
 * visible, no control, bidirectional-override or line-separator character), trimmed. A refusal is
 * an `InvalidInputError` naming `accountId`, with the manager's issues.
 *
 * @example
 * validAccountId(' acct_1 ') // 'acct_1'
 */
export function validAccountId(value: unknown): string {
  // An absent id is checked as an empty one: `partial` skips only what is undefined.
  const checked = KeyManager.check({ accountId: value ?? '' }, { partial: true });
  if (checked.ok) return checked.value.accountId as string;
  throw new InvalidInputError('accountId', (checked.issues[0] as InputIssue).message, { issues: checked.issues });
}

/** What a valid sign-in token carries. */
export interface SignInClaims {
  readonly accountId: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
  /** The token's single-use id, recorded when it is redeemed. */
  readonly nonce: string;
}

function originOf(baseUrl: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof baseUrl === 'string' ? new URL(baseUrl) : undefined;
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new InvalidInputError(
      'baseUrl',
      `baseUrl must be an http(s) URL such as 'https://example.com', got ${quote(baseUrl)}`,
    );
  }
  if (url.pathname !== '/' || url.search || url.hash) {
    throw new InvalidInputError(
      'baseUrl',
      `baseUrl must be an origin without a path; put '${url.pathname}' in basePath`,
    );
  }
  return url.origin;
}

/**
 * Signs the token of a one-time sign-in link. Signing only: no store is opened, so a command line can
 * print a link while the service holds the store. Single use is enforced when the link is redeemed.
 */
export async function signSignInToken(signer: Signer, accountId: string, expiresAt: number): Promise<string> {
  return seal(signer, PURPOSE, { a: accountId, e: expiresAt, n: randomId(16) });
}

/** The claims of a sign-in token whose MAC verifies and whose time has not run out, else null. */
export async function openSignInToken(signer: Signer, token: string, now: number): Promise<SignInClaims | null> {
  const claims = (await openSigned(signer, PURPOSE, token)) as { a?: unknown; e?: unknown; n?: unknown } | null;
  if (!claims || typeof claims.a !== 'string' || typeof claims.e !== 'number' || typeof claims.n !== 'string') {
    return null;
  }
  if (!(claims.e > now)) return null;
  return { accountId: claims.a, expiresAt: claims.e, nonce: claims.n };
}

/** The URL of a sign-in link: `<origin><basePath>/sign-in?token=...`. */
export function signInUrl(origin: string, basePath: string, token: string): string {
  const url = new URL(under(basePath, '/sign-in'), origin);
  url.searchParams.set('token', token);
  return url.href;
}

/** A positive duration in milliseconds, or an `InvalidInputError` naming `field`. */
export function positiveMs(field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidInputError(field, `${field} must be a number of milliseconds > 0, got ${String(value)}`);
  }
  return value;
}

/**
 * A one-time sign-in link to the dashboard, made with the secret alone: no store, no running
 * dashboard. Valid for 15 minutes and usable once (the dashboard records it when it is redeemed).
 * What `ui.signInLink` and `keygate dashboard link` use.
 *
 * @example
 * const link = await createSignInLink({
 *   secret: process.env.KEYGATE_DASHBOARD_SECRET!,
 *   accountId: 'acct_1',
 *   baseUrl: 'http://localhost:3000',
 *   basePath: '/dashboard',
 * }); // 'http://localhost:3000/dashboard/sign-in?token=...'
 */
export async function createSignInLink(options: SignInLinkOptions): Promise<string> {
  const signer = createSigner(secretBytes(options?.secret));
  const accountId = validAccountId(options.accountId);
  const origin = originOf(options.baseUrl);
  const basePath = normalizeBasePath(options.basePath);
  const ttlMs = positiveMs('ttlMs', options.ttlMs, SIGN_IN_LINK_TTL_MS);
  const now = (options.clock ?? Date.now)();
  return signInUrl(origin, basePath, await signSignInToken(signer, accountId, now + ttlMs));
}

export { originOf as signInOrigin };
