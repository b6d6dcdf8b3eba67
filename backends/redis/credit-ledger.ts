import {
  type CreditBalance,
  type CreditEntry,
  type CreditLedger,
  type CreditReconciliation,
  type EntriesOptions,
  type HoldOptions,
  type HoldResult,
  InvalidInputError,
  type SettleResult,
  type TopUpOptions,
} from 'keygate';
import {
  amountOverflow,
  amountOverHold,
  CAPABILITIES,
  type Capabilities,
  type Capable,
  DEFAULT_LEDGER_TIMEOUT_MS,
  validCreditAccount,
  validEntriesArgs,
  validHoldArgs,
  validHoldId,
  validSettleArgs,
  validTimeoutMs,
  validTopUpArgs,
  withLedgerDeadline,
} from 'keygate/store-kit';
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

/**
 * A prepaid credit ledger in Redis, exact across every process that shares the server and the prefix:
 * each call is one Lua script, which Redis runs atomically, so concurrent holds never overdraw an
 * account nor lose a credit, and each call is one round trip. An account's keys are
 * `<prefix>{<tag>}:available` (the available balance), `:holds` (open holds by expiry), `:held`
 * (their amounts and key ids), `:entries` (newest first) and `:refs` (top-up references used), the
 * tag being the SHA-256 of the account id; a hold id carries the tag, so `settle` and `release` find
 * the account's keys from the id alone. Every script first returns the account's lapsed holds, by
 * the server's clock, so a hold's credits come back on the account's next call after its `ttlMs`
 * with no background job.
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
export class RedisCreditLedger implements CreditLedger, Capable {
  /** Its `deadline`: each call settles within `timeoutMs`. */
  declare readonly [CAPABILITIES]: Capabilities;
  readonly prefix: string;
  /** Milliseconds a call may take before it rejects. */
  readonly timeoutMs: number;
  private readonly scripts: ScriptRunner;

  constructor(options: RedisCreditLedgerOptions) {
    if (typeof options?.client?.sendCommand !== 'function') {
      throw new InvalidInputError('client', 'client must be a node-redis client (createClient() from "redis")', {
        reason: 'wrong_type',
      });
    }
    this.prefix = validPrefix(options.prefix ?? 'keygate:credits:');
    const timeoutMs = validTimeoutMs(options.timeoutMs, DEFAULT_LEDGER_TIMEOUT_MS);
    this.timeoutMs = timeoutMs;
    const client = options.client;
    this.scripts = new ScriptRunner((args) => client.sendCommand(args));
    this[CAPABILITIES] = { deadline: this };
  }

  /**
   * Adds `amount` (a positive safe integer) to the account and writes a `top_up` entry. A `reference`
   * already used for the account changes nothing and answers the balance. A top-up that would take
   * the account's credits (available and held) past `Number.MAX_SAFE_INTEGER` is an `InvalidInputError`
   * naming `amount`, and nothing is written.
   *
   * @example
   * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf' }); // { balance: 500 }
   */
  async topUp(accountId: string, amount: number, options?: TopUpOptions): Promise<CreditBalance> {
    const args = validTopUpArgs(accountId, amount, options);
    const argv = [String(args.amount), newEntryId(), args.reference ?? ''];
    const [status, balance] = await this.run(TOP_UP, await accountTag(args.accountId), argv, tuple);
    if (status === 'overflow') throw amountOverflow(args.amount);
    return { balance };
  }

  /**
   * The available balance (top-ups minus charges minus open holds); 0 for an unknown account.
   *
   * @example
   * await ledger.balance('acct_1'); // 497
   */
  async balance(accountId: string): Promise<number> {
    return this.run(BALANCE, await accountTag(validCreditAccount(accountId)), [], count);
  }

  /**
   * Takes `amount` (a positive safe integer) from the available balance, or nothing when the balance
   * is short (`ok: false`). The hold lapses after `ttlMs` (default 600,000 ms) unless settled or released.
   *
   * @example
   * const held = await ledger.hold('acct_1', 3, { keyId: 'key_1', ttlMs: 30_000 }); // { ok: true, holdId, balance: 497 }
   */
  async hold(accountId: string, amount: number, options?: HoldOptions): Promise<HoldResult> {
    const args = validHoldArgs(accountId, amount, options);
    const tag = await accountTag(args.accountId);
    const holdId = newHoldId(tag);
    const argv = [String(args.amount), holdId, String(args.ttlMs), args.keyId ?? ''];
    const [status, balance] = await this.run(HOLD, tag, argv, tuple);
    return status === 'ok' ? { ok: true, holdId, balance } : { ok: false, balance };
  }

  /**
   * Charges `amount` (0 up to the hold; default all of it) as one `charge` entry and returns the rest.
   * A hold already settled, released, lapsed or unknown changes nothing: `{ charged: 0, balance }`.
   * An amount above the hold is an `InvalidInputError` naming `amount`, and nothing changes.
   *
   * @example
   * await ledger.settle(held.holdId, 2); // { charged: 2, balance: 498 }
   */
  async settle(holdId: string, amount?: number): Promise<SettleResult> {
    const args = validSettleArgs(holdId, amount);
    const tag = tagOfHold(args.holdId);
    // An id this ledger cannot have made names no hold: nothing to change, and no account to read.
    if (tag === undefined) return { charged: 0, balance: 0 };
    const argv = [args.holdId, args.amount === undefined ? '' : String(args.amount), newEntryId()];
    const [status, balance, third] = await this.run(SETTLE, tag, argv, tuple);
    if (status === 'over') throw amountOverHold(args.amount ?? 0, third);
    return { charged: status === 'ok' ? third : 0, balance };
  }

  /**
   * Returns the whole hold to the available balance, writing no entry. A hold already settled,
   * released, lapsed or unknown changes nothing.
   *
   * @example
   * await ledger.release(held.holdId); // { balance: 500 }
   */
  async release(holdId: string): Promise<CreditBalance> {
    const tag = tagOfHold(validHoldId(holdId));
    if (tag === undefined) return { balance: 0 };
    return { balance: await this.run(RELEASE, tag, [holdId], count) };
  }

  /**
   * The account's entries, newest first: at most `limit` (default 100, at most 1,000).
   *
   * @example
   * await ledger.entries('acct_1', { limit: 20 }); // [{ kind: 'charge', amount: -3, balance: 497, ... }, ...]
   */
  async entries(accountId: string, options?: EntriesOptions): Promise<CreditEntry[]> {
    const args = validEntriesArgs(accountId, options);
    const read = (reply: unknown) => list(reply).map((text) => entryOf(args.accountId, text));
    return this.run(ENTRIES, await accountTag(args.accountId), [String(args.limit)], read);
  }

  /**
   * Sums every entry of the account and reads its balance and open holds in one script, so the
   * figures are of one moment. It reads all the account's entries while Redis serves nothing else:
   * run it from a tool, not on a request's path.
   *
   * @example
   * await ledger.reconcile('acct_1'); // { accountId: 'acct_1', entries: 500, balance: 497, held: 3, ok: true }
   */
  async reconcile(accountId: string): Promise<CreditReconciliation> {
    const account = validCreditAccount(accountId);
    const read = (reply: unknown): CreditReconciliation => {
      const [balance, held, entries] = list(reply).map(count);
      if (balance === undefined || held === undefined || entries === undefined) throw unexpected(reply);
      return { accountId: account, entries, balance, held, ok: entries === balance + held };
    };
    return this.run(RECONCILE, await accountTag(account), [], read);
  }

  // One script under the deadline; a reply the script cannot have sent fails the call like Redis would.
  private run<T>(script: string, tag: string, args: string[], read: (reply: unknown) => T): Promise<T> {
    const keys = accountKeys(this.prefix, tag);
    return withLedgerDeadline('RedisCreditLedger', this.timeoutMs, async () =>
      read(await this.scripts.run(script, keys, args)),
    );
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

/** An entry as the scripts store it: its numbers as decimal text, its time as epoch milliseconds. */
interface StoredEntry {
  id: string;
  kind: 'top_up' | 'charge';
  amount: string;
  balance: string;
  keyId?: string;
  reference?: string;
  at: string;
}

function entryOf(accountId: string, text: string): CreditEntry {
  const stored = JSON.parse(text) as StoredEntry;
  const entry: CreditEntry = {
    id: stored.id,
    accountId,
    kind: stored.kind,
    amount: Number(stored.amount),
    balance: Number(stored.balance),
    createdAt: new Date(Number(stored.at)).toISOString(),
  };
  if (stored.keyId !== undefined) entry.keyId = stored.keyId;
  if (stored.reference !== undefined) entry.reference = stored.reference;
  return entry;
}
