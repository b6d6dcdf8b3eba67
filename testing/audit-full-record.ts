import type { AuditEntry, AuditEntryInput, AuditLog } from 'keygate';
import { AUDIT_ACTIONS } from 'keygate/store-kit';
import { type Case, type Expect, fresh } from './contract-kit.js';

/** What a case of the audit-log contract works with: the fixture's log and its peer (or itself). */
export interface AuditContext {
  readonly log: AuditLog;
  readonly peer: AuditLog;
  readonly expect: Expect;
}
const at = (ms: number) => new Date(Date.UTC(2026, 10, 24, 18, 0, 0) + ms).toISOString();

// Every action keygate writes must be storable: the list the library itself uses, not a copy of it.
const ACTIONS = AUDIT_ACTIONS;

/** Entries with every field set, in every shape a field takes, and one with every optional field left out. */
function entriesOf(accountId: string): AuditEntryInput[] {
  const full: AuditEntryInput[] = ACTIONS.map((action, i) => ({
    at: at(i * 1_001),
    accountId,
    keyId: `key_full_${i}`,
    action,
    actor: [{ type: 'cli', id: 'alice' } as const, { type: 'dashboard', id: 'ops@example.com' } as const][i % 2] ?? {
      type: 'api',
    },
    changes: {
      name: { before: 'ci', after: `ci — ünïcode ${i}` },
      allowedIps: { before: ['203.0.113.0/24'], after: [] },
      expiresAt: { before: null, after: '2027-01-01T00:00:00.000Z' },
      metadata: { before: { owner: 'a', n: 1 }, after: { owner: 'b', n: 2.5, nested: { on: true, none: null } } },
      status: { before: 'active', after: 'suspended' },
    },
    address: i % 2 ? '2001:db8::7' : '203.0.113.7',
  }));
  const apiActor: AuditEntryInput = {
    at: at(20_000),
    accountId,
    keyId: 'key_full_api',
    action: 'key.updated',
    actor: { type: 'api', id: 'svc_billing' },
    changes: { rateLimit: { before: { limit: 5, windowMs: 1_000 }, after: null } },
    address: '198.51.100.1',
  };
  const bare: AuditEntryInput = {
    at: at(30_000),
    accountId,
    action: 'dashboard.signed_in',
    actor: { type: 'dashboard' },
  };
  return [...full, apiActor, bare];
}

async function keepsEveryField({ log, peer, expect }: AuditContext): Promise<void> {
  const account = fresh('acct', 'full');
  const stored: AuditEntry[] = [];
  for (const [i, input] of entriesOf(account).entries()) {
    const entry = await (i % 2 ? peer : log).append(input);
    expect(entry).toEqual({ id: entry.id, ...input });
    stored.push(entry);
  }
  const newestFirst = [...stored].reverse();
  for (const reader of [log, peer]) {
    expect(await reader.list({ accountId: account, limit: 1_000 })).toEqual(newestFirst);
    for (const entry of stored) {
      if (entry.keyId === undefined) continue;
      expect(await reader.list({ accountId: account, keyId: entry.keyId })).toEqual([entry]);
    }
    const [newest, ...older] = newestFirst;
    expect(await reader.list({ accountId: account, before: newest?.id, limit: 1_000 })).toEqual(older);
  }
  // Absent optional fields stay absent: neither null nor empty (toEqual above tells undefined from null).
  const bare = stored.at(-1) as AuditEntry;
  expect([bare.keyId, bare.changes, bare.address, bare.actor.id]).toEqual([undefined, undefined, undefined, undefined]);
}

/** Every stored field of an audit entry, set and absent, through append and every listing by either instance. */
export const AUDIT_RECORD_CASES: ReadonlyArray<Case<AuditContext>> = [
  [
    'keeps every field of an entry, set and absent, for every action and actor, through append and every listing of either instance',
    keepsEveryField,
  ],
];
