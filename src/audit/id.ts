// Audit entry ids that sort by time as plain strings, in every backend (SQL `COLLATE "C"`, Redis
// lexical order, JavaScript `<`): `aud_`, the time in milliseconds (9 base-36 digits, enough until
// the year 5188), a counter within that millisecond (4 base-36 digits), 10 random base-36 characters.
// All lower case and fixed length, so byte order is time order.

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const COUNTER_LIMIT = 36 ** 4;

let lastMs = 0;
let counter = 0;

function random36(length: number): string {
  const bytes = new Uint8Array(length);
  crypto.getRandomValues(bytes);
  let out = '';
  // 252 = 7 * 36: a byte at or above it would bias the draw; taking it modulo 36 anyway costs under 2%
  // of one character's entropy, and these characters only break ties, they guard nothing.
  for (const b of bytes) out += ALPHABET[b % 36];
  return out;
}

/**
 * A new audit entry id: `aud_` and 23 lower-case base-36 characters, ordered as strings by when it
 * was made. Within one process ids are strictly increasing, even when the clock stands still or
 * steps back (the last time is kept and a counter breaks ties). Between processes, ids made in the
 * same millisecond order by their random part: a total order, but not the order of the appends.
 * So a listing paged with `before` never repeats or skips an entry that existed when its first page
 * was read; an entry another process appends meanwhile with an id below the page boundary (the same
 * millisecond, or a clock behind) shows on a fresh listing, not on the pages under way.
 *
 * @param nowMs the time in epoch milliseconds. @default Date.now()
 * @example
 * auditId() // 'aud_mhc2xg8k10000k3j9x0c1qa'
 */
export function auditId(nowMs: number = Date.now()): string {
  if (nowMs > lastMs) {
    lastMs = Math.floor(nowMs);
    counter = 0;
  } else if (++counter >= COUNTER_LIMIT) {
    // Over a million and a half ids in one millisecond: borrow the next one.
    lastMs += 1;
    counter = 0;
  }
  return `aud_${lastMs.toString(36).padStart(9, '0')}${counter.toString(36).padStart(4, '0')}${random36(10)}`;
}
