import type { UsageCount, UsageOutcome } from 'keygate/store-kit';

/** An HGETALL reply: a flat array (node-redis 4 raw commands) or an object (newer majors). */
export type HashReply = string[] | Record<string, string>;

/**
 * The counts of `keyId` for the UTC days `from` to `to` (inclusive) in the reply to `HGETALL
 * <prefix>usage:<keyId>`: field `day|outcome` -> count, and `_account` -> the key's account. Sorted by
 * day, then outcome.
 *
 * @example
 * countsOfHash('key_1', { _account: 'acct_1', '2026-11-01|allowed': '3' }, '2026-11-01', '2026-11-30')
 * // [{ keyId: 'key_1', accountId: 'acct_1', day: '2026-11-01', outcome: 'allowed', count: 3 }]
 */
export function countsOfHash(keyId: string, reply: HashReply, from: string, to: string): UsageCount[] {
  const entries = Array.isArray(reply)
    ? Array.from({ length: reply.length / 2 }, (_, i) => [reply[2 * i] as string, reply[2 * i + 1] as string] as const)
    : Object.entries(reply);
  const accountId = entries.find(([field]) => field === '_account')?.[1] ?? '';
  const out: UsageCount[] = [];
  for (const [field, value] of entries) {
    const bar = field.indexOf('|');
    if (bar < 0) continue;
    const day = field.slice(0, bar);
    if (day < from || day > to) continue;
    out.push({ keyId, accountId, day, outcome: field.slice(bar + 1) as UsageOutcome, count: Number(value) });
  }
  return out.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : a.outcome < b.outcome ? -1 : 1));
}
