import type { Dash } from '../context.js';
import { randomId } from '../security/crypto.js';

/** Name of the hidden field that carries the one-time token of a create or rotate form. */
export const ONCE_FIELD = '_once';

const PURPOSE = 'form-once';
// A token issued a moment "later" than now comes from a clock step between processes, not a forger.
const CLOCK_SKEW_MS = 60_000;

/** What a one-time token was issued for: the create form, or the rotate form of one key. */
export type FormAction = 'create' | `rotate:${string}`;

/** A verified one-time token: its random part and when it was issued and stops verifying (epoch ms). */
export interface OnceToken {
  readonly nonce: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

const signed = (csrf: string, action: FormAction, nonce: string, issuedAt: string) =>
  `${csrf}\n${action}\n${nonce}\n${issuedAt}`;

/**
 * A one-time token for a form that makes a key: a random nonce and the time, signed together with
 * the session's CSRF token and the action, so it is worthless in another session or on another
 * form. Each render issues a new one; it verifies for as long as a session can last
 * (`sessionAbsoluteMs`).
 *
 * @example
 * const token = await issueOnceToken(dash, c.get('csrf'), `rotate:${key.id}`); // '<nonce>.<time>.<mac>'
 */
export async function issueOnceToken(dash: Dash, csrf: string, action: FormAction): Promise<string> {
  const nonce = randomId(18);
  const issuedAt = dash.clock().toString(36);
  return `${nonce}.${issuedAt}.${await dash.signer.sign(PURPOSE, signed(csrf, action, nonce, issuedAt))}`;
}

/**
 * The token posted with a form, verified for this session and action; null when it is missing,
 * malformed, forged, from another session or form, or older than a session can last.
 *
 * @example
 * const once = await openOnceToken(dash, c.get('csrf'), 'create', form.get(ONCE_FIELD));
 */
export async function openOnceToken(
  dash: Dash,
  csrf: string,
  action: FormAction,
  token: string | null | undefined,
): Promise<OnceToken | null> {
  const [nonce, time, mac, ...rest] = (token ?? '').split('.');
  if (!nonce || !time || !mac || rest.length > 0 || !/^[0-9a-z]{1,12}$/.test(time)) return null;
  const issuedAt = Number.parseInt(time, 36);
  const now = dash.clock();
  const expiresAt = issuedAt + dash.times.absoluteMs;
  if (issuedAt > now + CLOCK_SKEW_MS || expiresAt <= now) return null;
  if (!(await dash.signer.verify(PURPOSE, signed(csrf, action, nonce, time), mac))) return null;
  return { nonce, issuedAt, expiresAt };
}

/**
 * Records `token` as used: true for the first call only, across every process that shares the
 * dashboard's store (atomic there). The one place form tokens reach the store.
 *
 * @example
 * if (!(await spendOnceToken(dash, once))) return alreadyCreatedPage(c, dash, once);
 */
export function spendOnceToken(dash: Dash, token: OnceToken): Promise<boolean> {
  return dash.store.markTokenUsed(`form:${token.nonce}`, new Date(token.expiresAt).toISOString());
}
