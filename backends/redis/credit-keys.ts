// Where the credit ledger keeps an account, and how a hold id leads back to it.
//
// An account's keys are `<prefix>{<tag>}:<part>`, where the tag is the SHA-256 of the account id
// (base64url, 43 characters). The tag is the keys' hash tag, so all of an account's keys sit in one
// hash slot and each script touches one slot: the same scripts run on Redis Cluster. A hold id carries
// the tag (`hold_<tag>.<24 hex digits>`), so `settle` and `release` name the account's keys from
// the id alone, in one round trip. A hold -> account mapping could not do that: whoever reads it does
// not know the account yet, so it would sit in another slot and cost a second round trip. The tag,
// not the account id itself, goes into the hold id so that every id is short (71 characters) whatever
// the account id holds, and a brace in an account id cannot move the hash tag.

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}

// Hold and entry ids are unique, not secret: 12 hex digits drawn at random once (and again after 16^12
// ids) and a 12-digit counter. Drawing random bytes for every id cost about 15 µs of CPU a call in a
// loaded server. Two processes share a stem with a chance of 1 in 2^48.
const SERIALS = 16 ** 12;
let stem = '';
let serial = SERIALS;

function uniqueHex(): string {
  if (++serial >= SERIALS) {
    stem = randomHex(6);
    serial = 0;
  }
  return stem + serial.toString(16).padStart(12, '0');
}

// Tags of the accounts seen last, so that a hold or a top-up hashes an account once: Web Crypto's
// digest costs tens of microseconds of CPU a call on Node (a thread-pool job). Bounded: the account
// remembered longest makes room.
const TAGS_MAX = 10_000;
const tags = new Map<string, string>();

/**
 * The tag of an account's keys: the SHA-256 of its id, in base64url.
 *
 * @example
 * await accountTag('acct_1') // 43 characters of [A-Za-z0-9_-]
 */
export async function accountTag(accountId: string): Promise<string> {
  const known = tags.get(accountId);
  if (known !== undefined) return known;
  const tag = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(accountId))));
  if (tags.size >= TAGS_MAX) tags.delete(tags.keys().next().value as string);
  tags.set(accountId, tag);
  return tag;
}

/**
 * The account's five keys, in the order the scripts of `credit-scripts.ts` expect them.
 *
 * @example
 * accountKeys('keygate:credits:', tag) // ['keygate:credits:{<tag>}:available', ...]
 */
export function accountKeys(prefix: string, tag: string): string[] {
  const base = `${prefix}{${tag}}:`;
  return [`${base}available`, `${base}holds`, `${base}held`, `${base}entries`, `${base}refs`];
}

/** A fresh entry id: `ce_` and 24 hex digits, unique. */
export function newEntryId(): string {
  return `ce_${uniqueHex()}`;
}

/**
 * A fresh hold id of the account whose tag is `tag`.
 *
 * @example
 * newHoldId(await accountTag('acct_1')) // 'hold_<tag>.5f0c…e1'
 */
export function newHoldId(tag: string): string {
  return `hold_${tag}.${uniqueHex()}`;
}

const HOLD_ID = /^hold_([A-Za-z0-9_-]{43})\.[0-9a-f]{24}$/;

/**
 * The tag of the account a hold id was made for, or undefined when `holdId` is no id
 * {@link newHoldId} makes (such a hold is unknown: settling or releasing it changes nothing).
 *
 * @example
 * tagOfHold(newHoldId(tag)) // tag
 * tagOfHold('hold_1')       // undefined
 */
export function tagOfHold(holdId: string): string | undefined {
  return HOLD_ID.exec(holdId)?.[1];
}
