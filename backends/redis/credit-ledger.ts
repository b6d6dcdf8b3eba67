import type { HoldResult } from 'keygate';
import { amountOverflow, amountOverHold, BackendCreditLedger, type HoldArgs, type TopUpArgs } from 'keygate/store-kit';
import { requireMethods } from './client-shape.js';
import { accountKeys, accountTag, newEntryId, newHoldId, tagOfHold } from './credit-keys.js';
import { BALANCE, ENTRIES, HOLD, RECONCILE, RELEASE, SETTLE, TOP_UP } from './credit-scripts.js';
import { validPrefix } from './prefix.js';
import { ScriptRunner } from './scripts.js';
import type { RedisCommandClient } from './throttle.js';

/**
 * Options of {@link RedisCreditLedger}.
 *
 * @example
 * const options: RedisCreditLedgerOptions = { client, prefix: 'billing:credits:', timeoutMs: 500 };
 */
export interface RedisCreditLedgerOptions {
  /** A connected node-redis client (v4.6, v5 or v6). The caller owns it and closes it. */
  client: RedisCommandClient;
  /**
   * Prefix of every key: `<prefix>{<tag>}:<part>`, the tag being the SHA-256 of the account id, so
   * that each account's keys share one slot of a Redis Cluster.
   *
   * @default 'keygate:credits:'
   */
  prefix?: string;
  /**
   * Milliseconds to wait for Redis before a call rejects with `CreditLedgerUnavailableError`.
   *
   * @default 1000
   */
  timeoutMs?: number;
}

// Every member of {@link RedisCreditLedgerOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ client: true, prefix: true, timeoutMs: true } satisfies Record<
  keyof RedisCreditLedgerOptions,
  true
>);

/**
 * A prepaid credit ledger in Redis, exact across every process that shares the server and the prefix:
 * each call is one Lua script, which Redis runs atomically, so concurrent holds never overdraw an
 * account nor lose a credit, and each call is one round trip. An account's keys are
 * `<prefix>{<tag>}:available` (the available balance), `:holds` (open holds by expiry), `:held`
 * (their amounts and key ids), `:entries` (newest first) and `:refs` (top-up references used), the
 * tag being the SHA-256 of the account id; a hold id carries the tag, so `settle` and `release` find
 * the account's keys from the id alone. Every script first returns the account's lapsed holds, by
 * the server's clock, so a hold's credits come back on the account's next call after its `ttlMs`
 * with no background job. A hold's keys go when it closes (settled, released, or lapsed on the
 * account's next call), so `prune()` has nothing to delete and answers `{ deleted: 0 }`; the entries
 * list is kept for good.
 *
 * Durability is the Redis server's persistence setting, which is yours to configure: with snapshots
 * only (or none), a crash loses the latest top-ups and charges. To bill from it, run Redis with AOF
 * and `appendfsync always`. A call that timed out may still have been applied; a top-up retried with
 * the same `reference` credits once. A call that fails or times out rejects with
 * `CreditLedgerUnavailableError` (code `credit_ledger_unavailable`), the client's error as `cause`.
 *
 * @example
 * const client = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
 * const ledger = new RedisCreditLedger({ client });
 * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf' });
 * const held = await ledger.hold('acct_1', 3, { keyId: key.id });
 * if (held.ok) await ledger.settle(held.holdId); // one charge entry of -3
 */
export class RedisCreditLedger extends BackendCreditLedger {
  readonly prefix: string;
  private readonly scripts: ScriptRunner;

  constructor(options: RedisCreditLedgerOptions) {
    requireMethods(
      options?.client,
      ['sendCommand'],
      'client',
      'a node-redis client (createClient() from "redis")',
      'wrong_type',
    );
    const prefix = validPrefix(options.prefix ?? 'keygate:credits:');
    super('RedisCreditLedger', options.timeoutMs, { options, names: OPTION_NAMES });
    this.prefix = prefix;
    const client = options.client;
    this.scripts = new ScriptRunner((args) => client.sendCommand(args));
  }

  protected async applyTopUp(args: TopUpArgs) {
    const argv = [String(args.amount), newEntryId(), args.reference ?? ''];
    const [status, balance] = await this.run(TOP_UP, await accountTag(args.accountId), argv, tuple);
    if (status === 'overflow') throw amountOverflow(args.amount);
    return { balance };
  }

  protected async readBalance(account: string) {
    return this.run(BALANCE, await accountTag(account), [], count);
  }

  protected async placeHold(args: HoldArgs): Promise<HoldResult> {
    const tag = await accountTag(args.accountId);
    const holdId = newHoldId(tag);
    const argv = [String(args.amount), holdId, String(args.ttlMs), args.keyId ?? ''];
    const [status, balance] = await this.run(HOLD, tag, argv, tuple);
    return status === 'ok' ? { ok: true, holdId, balance } : { ok: false, balance };
  }

  protected async settleHold(holdId: string, amount: number | undefined) {
    const tag = tagOfHold(holdId);
    // An id this ledger cannot have made names no hold: nothing to change, and no account to read.
    if (tag === undefined) return { charged: 0, balance: 0 };
    const argv = [holdId, amount === undefined ? '' : String(amount), newEntryId()];
    const [status, balance, third] = await this.run(SETTLE, tag, argv, tuple);
    if (status === 'over') throw amountOverHold(amount ?? 0, third);
    return { charged: status === 'ok' ? third : 0, balance };
  }

  protected async releaseHold(holdId: string) {
    const tag = tagOfHold(holdId);
    if (tag === undefined) return { balance: 0 };
    return { balance: await this.run(RELEASE, tag, [holdId], count) };
  }

  protected async readEntries(account: string, limit: number) {
    const read = (reply: unknown) => list(reply).map((text) => this.entryOf(account, text));
    return this.run(ENTRIES, await accountTag(account), [String(limit)], read);
  }

  // It reads all the account's entries while Redis serves nothing else: run it from a tool, not on a
  // request's path.
  protected async readFigures(account: string) {
    const read = (reply: unknown) => {
      const [balance, held, entries] = list(reply).map(count);
      if (balance === undefined || held === undefined || entries === undefined) throw unexpected(reply);
      return { accountId: account, entries, balance, held, ok: entries === balance + held };
    };
    return this.run(RECONCILE, await accountTag(account), [], read);
  }

  // One script; a reply the script cannot have sent fails the call like Redis would.
  private async run<T>(script: string, tag: string, args: string[], read: (reply: unknown) => T): Promise<T> {
    return read(await this.scripts.run(script, accountKeys(this.prefix, tag), args));
  }

  /** An entry as the scripts store it: its numbers as decimal text, its time as epoch milliseconds. */
  private entryOf(accountId: string, text: string) {
    const stored = JSON.parse(text) as StoredEntry;
    return this.entry({ ...stored, accountId, createdAt: new Date(Number(stored.at)).toISOString() });
  }
}

// Becomes the cause of the call's unavailable error: the server, not the caller, is at fault.
function unexpected(reply: unknown): Error {
  return new Error(`unexpected reply from a credit-ledger script: ${JSON.stringify(reply)}`);
}

/** A script's `{status, balance, amount?}` reply, its numbers read. */
function tuple(reply: unknown): [status: string, balance: number, amount: number] {
  if (!Array.isArray(reply) || reply.length < 2 || typeof reply[0] !== 'string') throw unexpected(reply);
  return [reply[0], count(reply[1]), reply.length > 2 ? count(reply[2]) : 0];
}

function list(reply: unknown): string[] {
  if (!Array.isArray(reply) || reply.some((item) => typeof item !== 'string')) throw unexpected(reply);
  return reply as string[];
}

function count(reply: unknown): number {
  const n = Number(reply);
  if (typeof reply !== 'string' || !Number.isSafeInteger(n)) throw unexpected(reply);
  return n;
}

interface StoredEntry {
  id: string;
  kind: 'top_up' | 'charge';
  amount: string;
  balance: string;
  keyId?: string;
  reference?: string;
  at: string;
}
