// Strict, allocation-free address parsing for the request path and for allow-list entries.
//
// Accepted: IPv4 in four-part decimal only (no octal, hex, short or over-255 forms, no leading zeros);
// IPv6 in any RFC 4291 spelling, any letter case, with an optional dotted IPv4 tail.
// Refused: zone ids (`fe80::1%eth0`), brackets, ports, whitespace, anything else.
// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, in any spelling) is reported as the IPv4 address it
// carries, by its bits. IPv4-compatible (`::a.b.c.d`) and NAT64 (`64:ff9b::/96`) forms stay IPv6.

/** What {@link parseAddress} found: not an address, IPv4 (or IPv4-mapped IPv6), or IPv6. */
export type AddressKind = 0 | 4 | 6;

// IPv6 groups are written straight into the caller's four 32-bit words (group k is the high or low
// half of word k >> 1): no buffer of the module's own, so concurrent or nested parses cannot clash.
function groupAt(words: Uint32Array, k: number): number {
  const w = words[k >> 1] as number;
  return k & 1 ? w & 0xffff : w >>> 16;
}

function setGroup(words: Uint32Array, k: number, value: number): void {
  const i = k >> 1;
  const w = words[i] as number;
  words[i] = k & 1 ? (w & 0xffff0000) | value : (w & 0xffff) | (value << 16);
}

// After a `::` at group `gap` with `n` groups parsed: moves the groups after the gap to the end, zeros between.
function expandGap(words: Uint32Array, gap: number, n: number): void {
  const shift = 8 - n;
  for (let k = n - 1; k >= gap; k--) setGroup(words, k + shift, groupAt(words, k));
  for (let k = gap; k < gap + shift; k++) setGroup(words, k, 0);
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

/** Parses strict dotted-decimal IPv4 in `s[start, end)`; returns the address as an unsigned 32-bit number, or -1. */
export function parseIPv4(s: string, start = 0, end = s.length): number {
  let value = 0;
  let parts = 0;
  let i = start;
  while (parts < 4) {
    const first = i;
    let octet = 0;
    while (i < end) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      octet = octet * 10 + (c - 48);
      i++;
      if (i - first > 3) return -1;
    }
    const digits = i - first;
    if (digits === 0 || octet > 255) return -1;
    if (digits > 1 && s.charCodeAt(first) === 48) return -1; // leading zero: octal in some parsers
    value = value * 256 + octet;
    parts++;
    if (parts < 4) {
      if (i >= end || s.charCodeAt(i) !== 46 /* . */) return -1;
      i++;
    }
  }
  return i === end ? value : -1;
}

// Reads the hex group that starts at `s[i]`: its value times 8 plus its length in digits (0 to 5; more
// than 4 is refused by the caller), packed into one number so that nothing is allocated.
function hexGroup(s: string, i: number, end: number): number {
  let j = i;
  let value = 0;
  while (j < end && j - i < 5) {
    const h = hexValue(s.charCodeAt(j));
    if (h < 0) break;
    value = value * 16 + h;
    j++;
  }
  return value * 8 + (j - i);
}

// Parses the groups of an IPv6 address in `s[0, end)` into `words`; false when it is not one.
function parseIPv6Groups(s: string, end: number, words: Uint32Array): boolean {
  let n = 0;
  let gap = -1;
  let i = 0;
  if (s.charCodeAt(0) === 58 /* : */) {
    if (s.charCodeAt(1) !== 58) return false;
    gap = 0;
    i = 2;
  }
  while (i < end) {
    const group = hexGroup(s, i, end);
    const j = i + (group & 7);
    if (j < end && s.charCodeAt(j) === 46 /* . */) return n <= 6 && ipv4Tail(s, i, end, words, n, gap);
    if (j === i || j - i > 4 || n === 8) return false;
    setGroup(words, n++, Math.floor(group / 8));
    if (j === end) break;
    if (s.charCodeAt(j) !== 58 /* : */) return false;
    if (s.charCodeAt(j + 1) === 58) {
      if (gap >= 0) return false;
      gap = n;
      i = j + 2;
    } else if (j + 1 === end) {
      return false;
    } else {
      i = j + 1;
    }
  }
  return groupsComplete(words, n, gap);
}

// A dotted IPv4 tail from `s[i]` to the end: the last two groups.
function ipv4Tail(s: string, i: number, end: number, words: Uint32Array, n: number, gap: number): boolean {
  const v4 = parseIPv4(s, i, end);
  if (v4 < 0) return false;
  setGroup(words, n, v4 >>> 16);
  setGroup(words, n + 1, v4 & 0xffff);
  return groupsComplete(words, n + 2, gap);
}

// Eight groups, or fewer with a `::` that stands for at least one zero group.
function groupsComplete(words: Uint32Array, n: number, gap: number): boolean {
  if (gap < 0) return n === 8;
  if (n > 7) return false;
  expandGap(words, gap, n);
  return true;
}

/**
 * Parses a client address or an allow-list address into `out` (four big-endian 32-bit words).
 * Returns 4 with the IPv4 address in `out[0]` (also for IPv4-mapped IPv6), 6 with all four words
 * filled, or 0 when `s` is not a strictly valid address.
 *
 * @example
 * const out = new Uint32Array(4);
 * parseAddress('::ffff:203.0.113.7', out) // 4, out[0] === 0xcb007107
 */
export function parseAddress(s: string, out: Uint32Array): AddressKind {
  const len = s.length;
  if (len === 0 || len > 45) return 0;
  if (s.indexOf(':') < 0) {
    const v4 = parseIPv4(s, 0, len);
    if (v4 < 0) return 0;
    out[0] = v4;
    return 4;
  }
  if (!parseIPv6Groups(s, len, out)) return 0;
  if (out[0] === 0 && out[1] === 0 && out[2] === 0xffff) {
    out[0] = out[3] as number;
    return 4;
  }
  return 6;
}

/** IPv6 words in canonical RFC 5952 text: lower case, longest run of two or more zero groups as `::`. */
export function formatIPv6(words: ArrayLike<number>): string {
  const g: number[] = [];
  for (let i = 0; i < 4; i++) {
    const w = words[i] as number;
    g.push(w >>> 16, w & 0xffff);
  }
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number) =>
    g
      .slice(from, to)
      .map((x) => x.toString(16))
      .join(':');
  if (bestStart < 0) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLen, 8)}`;
}

/** IPv4 number as dotted decimal. */
export function formatIPv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}
