import type { KeyStoreUnavailableError, TelemetryOptions } from 'keygate';
import { capabilityOf } from 'keygate';
import type { AuditLog, Outbox } from 'keygate/store-kit';

/** The options every dialect's `drizzle*Stores` takes, beside its own. */
export interface StoresOptions {
  /**
   * The key store's `onError`: told when its change channel (PostgreSQL) or a poll of its change
   * table fails; it recovers by itself. Default: ignore.
   */
  onError?: (err: KeyStoreUnavailableError) => void;
  /** The key store's `telemetry`, for a store used without a `CachedKeyStore`. @default undefined (none) */
  telemetry?: TelemetryOptions;
  /** Milliseconds a rate-limit `consume` may take (on SQLite: wait for the write lock) before it rejects. @default 250 */
  rateLimiterTimeoutMs?: number;
  /** Milliseconds a credit-ledger call may take (on SQLite: wait for the write lock) before it rejects. @default 1000 */
  creditLedgerTimeoutMs?: number;
}

/**
 * What every dialect's `drizzle*Stores` returns: its backend's classes over the client under the
 * Drizzle db, with the key store's audit log and outbox at hand.
 */
export interface StoresOf<Keys, Limiter, Ledger, Dashboard> {
  /** The key store (with usage, the change feed, the audit log and the outbox); give it to a `KeyManager`. */
  keys: Keys;
  /** A rate limiter in the dialect's `rate_limits` table. */
  rateLimiter: Limiter;
  /** A credit ledger in the dialect's `credit_*` tables. */
  credits: Ledger;
  /** The dashboard's store, over the same tables as `keys`. */
  dashboard: Dashboard;
  /** The audit log of `keys` (its `audit` capability), for reading entries without a `KeyManager`. */
  audit: AuditLog;
  /** The outbox of `keys` (its `outbox` capability), for a webhook dispatcher. */
  outbox: Outbox;
}

/** The members of {@link StoresOptions}, which every dialect's `drizzle*Stores` takes beside its own. */
export const STORES_OPTION_NAMES = Object.keys({
  onError: true,
  telemetry: true,
  rateLimiterTimeoutMs: true,
  creditLedgerTimeoutMs: true,
} satisfies Record<keyof StoresOptions, true>);

/** The key store's options among `options`: `onError` and `telemetry`, each when given. */
export function keyStoreHooks(options: StoresOptions): Pick<StoresOptions, 'onError' | 'telemetry'> {
  return {
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  };
}

/** The stores, with the audit log and outbox `keys` declares. */
export function storesOf<Keys extends object, Limiter, Ledger, Dashboard>(
  parts: Omit<StoresOf<Keys, Limiter, Ledger, Dashboard>, 'audit' | 'outbox'>,
): StoresOf<Keys, Limiter, Ledger, Dashboard> {
  const audit = capabilityOf(parts.keys, 'audit') as AuditLog;
  return { ...parts, audit, outbox: capabilityOf(parts.keys, 'outbox') as Outbox };
}

/**
 * The client under a Drizzle db (`db.$client`), and whether it has a method: how each dialect tells
 * the drivers it supports from the ones it names in its refusal.
 */
export function clientUnder(db: { $client: unknown }): {
  client: Record<string, unknown> | undefined;
  has: (method: string) => boolean;
} {
  const client = db?.$client as Record<string, unknown> | undefined;
  return { client, has: (method) => typeof client?.[method] === 'function' };
}
