import { type CompiledAllowList, compileAllowList } from '../ip/allow-list.js';
import type { ApiKeyRecord, PublicKey } from '../types.js';
import type { DenialCode } from './denials.js';
import type { AuthResult } from './result.js';

/** What the request path needs of a record, computed once per record object. */
export interface CompiledKey {
  readonly view: PublicKey;
  readonly revoked: boolean;
  /** Epoch milliseconds, or Infinity when the key never expires. */
  readonly expiresAtMs: number;
  readonly allowList: CompiledAllowList;
  readonly permissions: ReadonlySet<string>;
  /** The results that carry this key, by outcome, built on first use by `authenticate` and reused. */
  readonly results: { [outcome in DenialCode | 'allowed']?: AuthResult };
}

// Records are immutable; a change produces a new object (new version), so caching by identity is safe.
const compiled = new WeakMap<ApiKeyRecord, CompiledKey>();

/**
 * The public view of a record: every field but the digest, frozen.
 *
 * @example
 * toPublicKey(record).hash // undefined
 */
export function toPublicKey(record: ApiKeyRecord): PublicKey {
  const { hash: _digest, ...view } = record;
  return Object.freeze({
    ...view,
    permissions: Object.freeze([...record.permissions]),
    allowedIps: Object.freeze([...record.allowedIps]),
    metadata: Object.freeze({ ...record.metadata }),
    rateLimit: record.rateLimit ? Object.freeze({ ...record.rateLimit }) : null,
  });
}

/** The compiled form of `record`, built on first use and kept as long as the record object lives. */
export function compileKey(record: ApiKeyRecord): CompiledKey {
  let c = compiled.get(record);
  if (c === undefined) {
    c = {
      view: toPublicKey(record),
      revoked: record.status !== 'active',
      expiresAtMs: record.expiresAt ? Date.parse(record.expiresAt) : Number.POSITIVE_INFINITY,
      allowList: compileAllowList(record.allowedIps),
      permissions: new Set(record.permissions),
      results: {},
    };
    compiled.set(record, c);
  }
  return c;
}
