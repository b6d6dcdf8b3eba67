// Finding a person's address at a domain, offline: the usual corporate patterns, most common first.
// Without probing mailboxes (which needs port 25 and is unwelcome) no pattern can be confirmed; the
// domain's MX says whether any of them can receive mail.

/** Patterns in the order companies use them most (first.last is by far the most common). */
export const PATTERNS = Object.freeze([
  'first.last',
  'flast',
  'first',
  'firstlast',
  'f.last',
  'first_last',
  'firstl',
  'first.l',
  'last.first',
  'lastf',
  'last',
  'first-last',
  'fl',
]);

/**
 * Turns a name into the letters an address can carry: accents dropped (`é` -> `e`), lower case,
 * only a-z and 0-9 (`O'Brien-Smith` -> `obriensmith`).
 *
 * @param {string} name
 * @returns {string} possibly empty, when the name has no Latin letters or digits
 * @example
 * addressPart('José'); // 'jose'
 */
export function addressPart(name) {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[^a-z0-9]/g, '');
}

/**
 * The candidate local parts for a person, most likely first, without duplicates.
 *
 * @param {string} first normalised with {@link addressPart}, not empty
 * @param {string} last normalised with {@link addressPart}, not empty
 * @returns {Array<{ pattern: string, local: string }>}
 * @example
 * candidates('ada', 'lovelace')[0]; // { pattern: 'first.last', local: 'ada.lovelace' }
 */
export function candidates(first, last) {
  const parts = { first, last, f: first[0] ?? '', l: last[0] ?? '' };
  const seen = new Set();
  const out = [];
  for (const pattern of PATTERNS) {
    const local = pattern.replace(/first|last|f|l/g, (token) => parts[/** @type {keyof typeof parts} */ (token)]);
    if (seen.has(local)) continue;
    seen.add(local);
    out.push({ pattern, local });
  }
  return out;
}
