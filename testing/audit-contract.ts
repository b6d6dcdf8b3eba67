import { type AuditEntry, type AuditEntryInput, type AuditLog, generateKey, hashKey } from 'keygate';
import { AUDIT_RECORD_CASES, type AuditContext as Context } from './audit-full-record.js';
import { AUDIT_RETENTION_CASES } from './audit-retention.js';
import { type Case, describeCases, fresh, rejection } from './contract-kit.js';
import type { ContractTestApi } from './contract-types.js';

/**
 * An audit log for one test of {@link describeAuditLogContract}. Every test uses accounts of its own,
 * so a fixture may share one database or prefix between tests and runs.
 *
 * @example
 * const fixture: AuditLogFixture = { log: capabilityOf(new MemoryKeyStore(), 'audit')! };
 */
export interface AuditLogFixture {
  log: AuditLog;
  /** A second log over the same data, as another process would hold it; concurrent appends are spread over both. Default: `log`. */
  peer?: AuditLog;
  /** Releases what the fixture opened. */
  close?(): Promise<void>;
}

// Every test works on accounts no other test or run touches.
const freshAccount = (label: string) => fresh('acct', label);
const at = (second: number) => new Date(Date.UTC(2026, 10, 24, 18, 0, second)).toISOString();

function entryOf(accountId: string, overrides: Partial<AuditEntryInput> = {}): AuditEntryInput {
  return { at: at(0), accountId, action: 'key.updated', actor: { type: 'api' }, ...overrides };
}

// Every entry of `query`'s listing, page by page of `limit`, following `before`.
async function allPages(log: AuditLog, accountId: string, limit: number, keyId?: string): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let before: string | undefined;
  for (let page = 0; page < 1_000; page++) {
    const entries = await log.list({ accountId, limit, ...(keyId && { keyId }), ...(before && { before }) });
    out.push(...entries);
    if (entries.length < limit) return out;
    before = entries.at(-1)?.id;
  }
  return out;
}

async function appendsAndLists({ log, expect }: Context): Promise<void> {
  const account = freshAccount('append');
  const input: AuditEntryInput = {
    at: at(5),
    accountId: account,
    keyId: 'key_contract0000000001',
    action: 'key.updated',
    actor: { type: 'cli', id: 'alice' },
    changes: { name: { before: 'ci', after: 'ci-2' }, allowedIps: { before: ['203.0.113.0/24'], after: [] } },
    address: '203.0.113.7',
  };
  const stored = await log.append(input);
  expect(typeof stored.id).toBe('string');
  expect(stored).toEqual({ id: stored.id, ...input });
  expect(await log.list({ accountId: account })).toEqual([stored]);
  const bare = await log.append({
    at: at(6),
    accountId: account,
    action: 'dashboard.signed_in',
    actor: { type: 'dashboard' },
  });
  expect([bare.keyId, bare.changes, bare.address]).toEqual([undefined, undefined, undefined]);
  expect(bare.actor).toEqual({ type: 'dashboard' });
}

async function keepsTime({ log, expect }: Context): Promise<void> {
  const account = freshAccount('time');
  const stored = await log.append(entryOf(account, { at: '2026-11-24T19:00:00.123+01:00' }));
  expect(stored.at).toBe('2026-11-24T18:00:00.123Z');
  expect((await log.list({ accountId: account }))[0]?.at).toBe('2026-11-24T18:00:00.123Z');
}

async function newestFirst({ log, expect }: Context): Promise<void> {
  const account = freshAccount('order');
  const appended: AuditEntry[] = [];
  for (let i = 0; i < 5; i++) appended.push(await log.append(entryOf(account, { at: at(i) })));
  const listed = await log.list({ accountId: account });
  expect(listed.map((e) => e.id)).toEqual(appended.map((e) => e.id).reverse());
  for (let i = 1; i < appended.length; i++) {
    expect((appended[i]?.id ?? '') > (appended[i - 1]?.id ?? '')).toBe(true);
  }
  const latest = await log.list({ accountId: account, limit: 2 });
  expect(latest.map((e) => e.id)).toEqual([appended[4]?.id, appended[3]?.id]);
}

async function perKey({ log, expect }: Context): Promise<void> {
  const account = freshAccount('per_key');
  const a = await log.append(entryOf(account, { keyId: 'key_a', action: 'key.created' }));
  await log.append(entryOf(account, { keyId: 'key_b', action: 'key.created' }));
  const c = await log.append(entryOf(account, { keyId: 'key_a', action: 'key.revoked' }));
  await log.append(entryOf(account, { action: 'dashboard.signed_in' }));
  expect((await log.list({ accountId: account, keyId: 'key_a' })).map((e) => e.id)).toEqual([c.id, a.id]);
  expect(await log.list({ accountId: account })).toHaveLength(4);
  expect(await log.list({ accountId: account, keyId: 'key_none' })).toEqual([]);
}

async function pages({ log, expect }: Context): Promise<void> {
  const account = freshAccount('pages');
  const ids: string[] = [];
  for (let i = 0; i < 25; i++) ids.push((await log.append(entryOf(account, { keyId: `key_${i % 2}` }))).id);
  const first = await log.list({ accountId: account, limit: 10 });
  expect(first.map((e) => e.id)).toEqual(ids.slice(15).reverse());
  const second = await log.list({ accountId: account, limit: 10, before: first.at(-1)?.id });
  expect(second.map((e) => e.id)).toEqual(ids.slice(5, 15).reverse());
  const third = await log.list({ accountId: account, limit: 10, before: second.at(-1)?.id });
  expect(third.map((e) => e.id)).toEqual(ids.slice(0, 5).reverse());
  expect(await log.list({ accountId: account, limit: 10, before: third.at(-1)?.id })).toEqual([]);
  const odd = await allPages(log, account, 4, 'key_1');
  expect(odd.map((e) => e.id)).toEqual(ids.filter((_, i) => i % 2).reverse());
}

async function defaultLimit({ log, expect }: Context): Promise<void> {
  const account = freshAccount('limit');
  await Promise.all(Array.from({ length: 55 }, () => log.append(entryOf(account))));
  expect(await log.list({ accountId: account })).toHaveLength(50);
  expect(await log.list({ accountId: account, limit: 1000 })).toHaveLength(55);
}

async function concurrentAppends({ log, peer, expect }: Context): Promise<void> {
  const account = freshAccount('race');
  const appended = await Promise.all(
    Array.from({ length: 60 }, (_, i) => (i % 2 ? peer : log).append(entryOf(account, { keyId: `key_${i % 3}` }))),
  );
  expect(new Set(appended.map((e) => e.id)).size).toBe(60);
  for (const reader of [log, peer]) {
    const listed = await allPages(reader, account, 7);
    expect(listed).toHaveLength(60);
    const ids = listed.map((e) => e.id);
    expect(new Set(ids).size).toBe(60);
    expect(ids).toEqual([...appended.map((e) => e.id)].sort().reverse());
    expect(await allPages(reader, account, 6, 'key_1')).toHaveLength(20);
  }
}

async function isolated({ log, expect }: Context): Promise<void> {
  const [account, other] = [freshAccount('mine'), freshAccount('theirs')];
  const mine = await log.append(entryOf(account, { keyId: 'key_mine' }));
  await log.append(entryOf(other, { keyId: 'key_theirs' }));
  expect(await log.list({ accountId: account })).toEqual([mine]);
  expect(await log.list({ accountId: account, keyId: 'key_theirs' })).toEqual([]);
  // An account id that extends another's is not that account.
  expect(await log.list({ accountId: `${account}:key_mine` })).toEqual([]);
  expect(await log.list({ accountId: account.slice(0, -1) })).toEqual([]);
}

function tamper(entry: AuditEntry): void {
  const loose = entry as unknown as Record<string, unknown> & { actor: object; changes?: Record<string, object> };
  const name = loose.changes?.name;
  for (const change of [
    () => Reflect.set(loose, 'action', 'key.created'),
    () => Reflect.set(loose.actor, 'id', 'mallory'),
    () => name && Reflect.set(name, 'after', 'forged'),
    () => Reflect.deleteProperty(loose, 'address'),
  ]) {
    try {
      change();
    } catch {
      // A frozen entry refuses; either way the stored one must not change.
    }
  }
}

async function immutable({ log, expect }: Context): Promise<void> {
  const account = freshAccount('immutable');
  const input = entryOf(account, {
    actor: { type: 'cli', id: 'alice' },
    changes: { name: { before: 'a', after: 'b' } },
    address: '198.51.100.1',
  });
  const stored = await log.append(input);
  const snapshot = JSON.parse(JSON.stringify(stored));
  tamper(stored);
  const [listed] = await log.list({ accountId: account });
  expect(listed).toEqual(snapshot);
  if (listed) tamper(listed);
  expect(await log.list({ accountId: account })).toEqual([snapshot]);
  // The input object is not kept either.
  (input.changes as Record<string, { after: unknown }>).name = { after: 'forged' } as never;
  expect(await log.list({ accountId: account })).toEqual([snapshot]);
}

async function noSecret({ log, expect }: Context): Promise<void> {
  const account = freshAccount('secret');
  const secret = generateKey({ mode: 'live' });
  const digest = await hashKey(secret);
  const stored = await log.append(
    entryOf(account, {
      changes: {
        metadata: {
          before: { owner: 'ops' },
          after: { owner: 'ops', apiToken: 'tok_plain_value', pasted: secret, nested: [{ note: digest }] },
        },
      },
    }),
  );
  const listed = JSON.stringify(await log.list({ accountId: account }));
  for (const text of [JSON.stringify(stored), listed]) {
    expect(text.includes(secret)).toBe(false);
    expect(text.includes(secret.slice(8))).toBe(false);
    expect(text.includes(digest)).toBe(false);
    expect(text.includes('tok_plain_value')).toBe(false);
  }
  expect(stored.changes?.metadata?.before).toEqual({ owner: 'ops' });
}

/** Entries refused: the field the `invalid_input` error names, what the case is, and the entry. */
const BAD_ENTRIES: ReadonlyArray<readonly [field: string, title: string, entry: (account: string) => unknown]> = [
  ['accountId', 'an empty account id', () => entryOf('')],
  ['accountId', 'an account id with a line break', (a) => entryOf(`${a}\n2`)],
  ['at', 'a time that is not ISO 8601', (a) => entryOf(a, { at: 'yesterday' })],
  ['at', 'a time as a number', (a) => ({ ...entryOf(a), at: Date.now() })],
  ['action', 'an unknown action', (a) => ({ ...entryOf(a), action: 'key.deleted' })],
  ['actor', 'no actor', (a) => ({ ...entryOf(a), actor: undefined })],
  ['actor.type', 'an unknown actor type', (a) => ({ ...entryOf(a), actor: { type: 'robot' } })],
  ['actor.id', 'an empty actor id', (a) => entryOf(a, { actor: { type: 'cli', id: '' } })],
  ['actor.id', 'a key as actor id', (a) => entryOf(a, { actor: { type: 'api', id: generateKey() } })],
  ['keyId', 'an empty key id', (a) => entryOf(a, { keyId: '' })],
  ['address', 'a key as address', (a) => entryOf(a, { address: generateKey() })],
  ['changes.name', 'a change that is not { before, after }', (a) => ({ ...entryOf(a), changes: { name: 'ci' } })],
  ['changes.hash', 'a change of the digest', (a) => entryOf(a, { changes: { hash: { before: null, after: 'x' } } })],
  [
    'changes.secret',
    'a change of the secret',
    (a) => entryOf(a, { changes: { secret: { before: null, after: 'x' } } }),
  ],
  ['secret', 'a field an entry does not have', (a) => ({ ...entryOf(a), secret: 'mk_live_x' })],
  ['id', 'an id chosen by the caller', (a) => ({ ...entryOf(a), id: 'aud_mine' })],
];

async function refusesEntry({ log, expect }: Context, field: string, entry: (a: string) => unknown): Promise<void> {
  const account = freshAccount('bad_entry');
  const err = await rejection(log.append(entry(account) as AuditEntryInput));
  expect(err).toMatchObject({ code: 'invalid_input', field });
  expect(await log.list({ accountId: account })).toEqual([]);
}

/** Queries refused: the field the `invalid_input` error names, what the case is, and the query. */
const BAD_QUERIES: ReadonlyArray<readonly [field: string, title: string, query: (account: string) => unknown]> = [
  ['accountId', 'an empty account id', () => ({ accountId: '' })],
  ['limit', 'a limit of 0', (a) => ({ accountId: a, limit: 0 })],
  ['limit', 'a limit of 1,001', (a) => ({ accountId: a, limit: 1001 })],
  ['limit', 'a fractional limit', (a) => ({ accountId: a, limit: 2.5 })],
  ['before', 'a number as before', (a) => ({ accountId: a, before: 42 })],
  ['keyId', 'an empty key id', (a) => ({ accountId: a, keyId: '' })],
  ['after', 'an option a listing does not have', (a) => ({ accountId: a, after: 'aud_1' })],
];

/**
 * The behaviour every `AuditLog` must have, as a test suite a host runs against its own log: an entry
 * appended is listed as given with a new id (`at` kept as `toISOString` gives it); listings newest
 * first, per account and per key, 50 by default and up to 1,000; paging with `before` and `limit`
 * with no entry repeated or skipped, also after 60 concurrent appends spread over `peer`, and the same
 * entries through `peer`; accounts isolated; returned entries that cannot change stored ones; bad
 * entries and queries refused as `invalid_input` naming the field, with nothing written; no
 * secret stored (a change of a secret-named field refused, a key, a digest or a member named like a
 * token in a value redacted); and `prune` deleting the entries of every account dated before its
 * cutoff (entries dated in 2001: a fixture shared with another run's suite at the same time may see
 * that run's), counting them, a second prune deleting none, bad arguments refused.
 *
 * @example
 * import { describe, it, expect, beforeEach, afterEach } from 'vitest';
 * import { describeAuditLogContract } from 'keygate/testing';
 * describeAuditLogContract('MyAuditLog', async () => ({ log: new MyAuditLog(client) }), { describe, it, expect, beforeEach, afterEach });
 */
export function describeAuditLogContract(name: string, factory: () => Promise<AuditLogFixture>, t: ContractTestApi) {
  const cases: ReadonlyArray<Case<Context>> = [
    ['lists an appended entry as given, with a new id; optional fields absent stay absent', appendsAndLists],
    ['keeps at as an ISO 8601 string in UTC', keepsTime],
    ['lists newest first, ids increasing with each append, at most limit entries', newestFirst],
    ["lists one key's entries with keyId", perKey],
    ['pages with before and limit, each entry once, to an empty page', pages],
    ['returns 50 entries by default and up to 1,000 with limit', defaultLimit],
    ['pages 60 concurrent appends through both instances with no entry repeated or skipped', concurrentAppends],
    ["keeps accounts apart: another account's entries, even of a key asked by id, are not listed", isolated],
    ['returns entries whose change changes nothing stored', immutable],
    ['stores no secret: a key, a digest or a token-named member in a change is redacted', noSecret],
    ...AUDIT_RECORD_CASES,
    ...AUDIT_RETENTION_CASES,
    ...BAD_ENTRIES.map(
      ([field, title, entry]): Case<Context> => [
        `refuses ${title} as invalid_input naming ${field}, writing nothing`,
        (c) => refusesEntry(c, field, entry),
      ],
    ),
    ...BAD_QUERIES.map(
      ([field, title, query]): Case<Context> => [
        `refuses a listing with ${title} as invalid_input naming ${field}`,
        async ({ log, expect }) => {
          const err = await rejection(log.list(query(freshAccount('bad_query')) as never));
          expect(err).toMatchObject({ code: 'invalid_input', field });
        },
      ],
    ),
  ];
  const contextOf = (fx: AuditLogFixture) => ({ log: fx.log, peer: fx.peer ?? fx.log, expect: t.expect });
  describeCases(t, `audit log contract: ${name}`, factory, contextOf, cases);
}
