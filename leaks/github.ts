import {
  type AuditActor,
  type CreatedKey,
  type EventHook,
  type KeygateEvent,
  KeyManager,
  type LeakAction,
  type ManagedKey,
} from 'keygate';
import { readCapped } from 'keygate/adapter-kit';
import { sha256Hex } from '#digest';
import { InvalidInputError, KeygateError } from '#errors';
import { looksLikeKey } from '../src/redact/keys.js';
import { checkOptionNames } from '../src/validate/options.js';
import { handledSince, LEAK_REASON } from './handled.js';
import { parseReports, type ReportedToken } from './payload.js';
import { type FetchFunction, GITHUB_SECRET_SCANNING_KEYS_URL, PublicKeyRing } from './public-keys.js';
import { feedbackResponse, problem } from './respond.js';
import { checkSignature } from './verify.js';

/**
 * What to do with a key GitHub found in public: a {@link LeakAction} for every key, or a function of
 * the key (its account, mode, metadata...) that answers one.
 *
 * @example
 * const policy: LeakPolicy = (key) => (key.mode === 'live' && key.metadata.plan === 'enterprise' ? 'notify' : 'suspend');
 */
export type LeakPolicy = LeakAction | ((key: ManagedKey) => LeakAction | Promise<LeakAction>);

/**
 * A leaked key that the `rotate` policy replaced: the host delivers `successor.secret` to the key's
 * owner (keygate keeps no copy of it).
 *
 * @example
 * const onRotated = async ({ leaked, successor }: LeakRotation) => mailer.sendNewKey(leaked.accountId, successor.secret);
 */
export interface LeakRotation {
  /** The leaked key, as it was before the rotation. */
  readonly leaked: ManagedKey;
  /** The new key: its raw secret (this once) and its view. */
  readonly successor: CreatedKey;
}

/**
 * Options of {@link githubSecretScanning}.
 *
 * @example
 * const options: GithubSecretScanningOptions = { manager: keys, policy: 'suspend' };
 */
export interface GithubSecretScanningOptions {
  /** The manager over the keys' store; its prefix and pepper find a reported key. */
  manager: KeyManager;
  /**
   * What a report of one of the manager's keys does (`notify`, `suspend`, `rotate`, `revoke`), or a
   * function of the key that answers it (per account, per plan...).
   * @default live keys `'suspend'`, test keys `'notify'`
   */
  policy?: LeakPolicy;
  /**
   * Where GitHub's signing keys are published, JSON `{ public_keys: [{ key_identifier, key }] }`: an
   * `https:` URL, or `http:` on a loopback address (a drill, a test).
   * @default 'https://api.github.com/meta/public_keys/secret_scanning'
   */
  publicKeysUrl?: string;
  /** How the public keys are fetched. @default globalThis.fetch */
  fetch?: FetchFunction;
  /**
   * Current time in epoch milliseconds, for the refetch interval, expiries and `replayWindowMs` (give
   * it the manager's clock: the window is measured against the times the manager wrote).
   * @default Date.now
   */
  clock?: () => number;
  /** Receives `key.leaked` (with `url`, `source`, `action`), and `audit.failed` when the leak's audit entry could not be written. @default undefined */
  onEvent?: EventHook;
  /**
   * What the answer names each token by: `'token_hash'` (its SHA-256 in hex, so the response body
   * never holds a live key) or `'token_raw'` (the token as GitHub sent it).
   * @default 'token_hash'
   */
  feedback?: 'token_hash' | 'token_raw';
  /** With the `rotate` policy: how long the leaked key keeps working, in milliseconds. @default 0 (it stops at once) */
  rotateGraceMs?: number;
  /** With the `rotate` policy: receives the new key, to deliver its secret to the owner. @default undefined */
  onRotated?: (rotation: LeakRotation) => void | Promise<void>;
  /** The largest body accepted, in bytes; a larger one is answered 413. @default 1_048_576 (1 MiB) */
  maxBodyBytes?: number;
  /** The least time between two fetches of the public keys for unknown key ids, in milliseconds. @default 60_000 */
  refetchIntervalMs?: number;
  /** How long a fetch of the public keys may take, in milliseconds. @default 5_000 */
  keysTimeoutMs?: number;
  /**
   * How long a key stays handled after a report acted on it, in milliseconds: another report of it
   * within this time (a captured report replayed, GitHub's retry, the key found somewhere else) is
   * answered `true_positive` and does nothing more: no second suspension, event or audit entry, even
   * if the owner resumed the key meanwhile. After it, a report acts again. > 0.
   * @default 86_400_000 (a day)
   */
  replayWindowMs?: number;
}

/** Every option {@link githubSecretScanning} takes; any other member is refused. */
const OPTION_NAMES: readonly (keyof GithubSecretScanningOptions)[] = [
  'manager',
  'policy',
  'publicKeysUrl',
  'fetch',
  'clock',
  'onEvent',
  'feedback',
  'rotateGraceMs',
  'onRotated',
  'maxBodyBytes',
  'refetchIntervalMs',
  'keysTimeoutMs',
  'replayWindowMs',
];

/**
 * The audit actor of every change a report makes: `{ type: 'api', id: 'github-secret-scanning' }`.
 *
 * @example
 * (await keys.audit({ accountId })).filter((e) => e.actor.id === GITHUB_ACTOR.id) // what GitHub's reports did
 */
export const GITHUB_ACTOR: AuditActor = Object.freeze({ type: 'api', id: 'github-secret-scanning' });

const ACTIONS: readonly LeakAction[] = ['notify', 'suspend', 'rotate', 'revoke'];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function positive(field: string, value: number | undefined, fallback: number, zero = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!zero && value === 0)) {
    throw new InvalidInputError(field, `${field} must be a finite number ${zero ? '>= 0' : '> 0'}`);
  }
  return value;
}

function keysUrl(value: unknown): string {
  if (value === undefined) return GITHUB_SECRET_SCANNING_KEYS_URL;
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {}
  if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)))) {
    throw new InvalidInputError('publicKeysUrl', 'publicKeysUrl must be an https: URL, or http: on a loopback address');
  }
  return url.href;
}

function checkPolicy(value: unknown): LeakPolicy | undefined {
  if (value === undefined || typeof value === 'function' || ACTIONS.includes(value as LeakAction)) {
    return value as LeakPolicy | undefined;
  }
  throw new InvalidInputError('policy', `policy must be one of ${ACTIONS.join(', ')}, or a function of the key`);
}

// GitHub's URL, with the token cut out should it appear in it, and nothing key-shaped.
function safeUrl(url: string, token: string): string {
  const cut = token === '' ? url : url.split(token).join('[redacted]');
  return looksLikeKey(cut) ? '[redacted]' : cut;
}

// The suspension's reason: printable ASCII only, at most 500 characters (what `suspend` accepts).
function reasonFor(url: string): string {
  const where = url.replace(/[^\x20-\x7e]/g, '');
  return `${LEAK_REASON}${where ? ` at ${where}` : ''}`.slice(0, 500);
}

/**
 * A Fetch handler `(Request) => Promise<Response>` for GitHub's secret scanning partner program: GitHub
 * POSTs the tokens of your format it found in public (`[{ token, type, url, source }]`), signed with
 * ECDSA P-256 (headers `Github-Public-Key-Identifier`, `Github-Public-Key-Signature`), and reads back
 * `[{ token_hash | token_raw, token_type, label }]`.
 *
 * - The signature is checked with Web Crypto against GitHub's published keys (fetched once, again for
 *   a key id not seen yet, at most once per `refetchIntervalMs`). Missing or bad: 401, nothing looked
 *   up or changed. Body over `maxBodyBytes`: 413. Not the expected JSON: 400 (problem+json).
 * - A token that is not a well-formed key of the manager's prefix (offline: prefix, mode, length,
 *   alphabet, checksum) is a `false_positive` with no store lookup; one no key has, too.
 * - A key found is a `true_positive` and gets the policy (default: suspend live keys, notify for test
 *   keys), as the actor `{ type: 'api', id: 'github-secret-scanning' }`; a `key.leaked` audit entry and
 *   event record the report (`url`, `source`, `action`), never the token. Another report of a key
 *   acted on within `replayWindowMs` (a day) is answered alike and does nothing: no second change,
 *   event or audit entry. After it, a report of a key already suspended, revoked or rotated records
 *   the report (`notify`) and changes nothing more.
 * - A store that fails: 503, so that GitHub retries (what was done already is not done twice).
 *
 * @example
 * import { githubSecretScanning } from 'keygate/leaks';
 * const leaks = githubSecretScanning({ manager: keys, onEvent: (e) => log.warn(e) });
 * app.post('/github/secret-scanning', (c) => leaks(c.req.raw)); // Hono
 */
export function githubSecretScanning(options: GithubSecretScanningOptions): (request: Request) => Promise<Response> {
  checkOptionNames(options, OPTION_NAMES, 'githubSecretScanning');
  const manager = options?.manager;
  if (!(manager instanceof KeyManager)) {
    throw new InvalidInputError('manager', "manager must be a KeyManager from 'keygate'");
  }
  const policy = checkPolicy(options.policy);
  const feedback = options.feedback ?? 'token_hash';
  if (feedback !== 'token_hash' && feedback !== 'token_raw') {
    throw new InvalidInputError('feedback', "feedback must be 'token_hash' or 'token_raw'");
  }
  const fetchKeys = options.fetch ?? ((input: string, init?: RequestInit) => globalThis.fetch(input, init));
  if (typeof fetchKeys !== 'function') throw new InvalidInputError('fetch', 'fetch must be a function');
  const clock = options.clock ?? Date.now;
  const graceMs = positive('rotateGraceMs', options.rotateGraceMs, 0, true);
  const maxBodyBytes = positive('maxBodyBytes', options.maxBodyBytes, 1_048_576);
  const replayWindowMs = positive('replayWindowMs', options.replayWindowMs, 86_400_000);
  const ring = new PublicKeyRing({
    url: keysUrl(options.publicKeysUrl),
    fetch: fetchKeys,
    clock,
    refetchIntervalMs: positive('refetchIntervalMs', options.refetchIntervalMs, 60_000, true),
    timeoutMs: positive('keysTimeoutMs', options.keysTimeoutMs, 5_000),
  });
  const emit = (event: KeygateEvent) => {
    if (!options.onEvent) return;
    try {
      Promise.resolve(options.onEvent(event)).catch(() => {});
    } catch {}
  };

  const decide = async (key: ManagedKey): Promise<LeakAction> => {
    const chosen = typeof policy === 'function' ? await policy(key) : (policy ?? defaultPolicy(key));
    if (!ACTIONS.includes(chosen)) throw new InvalidInputError('policy', 'the policy function answered no LeakAction');
    return chosen;
  };

  const stillWorks = (key: ManagedKey) =>
    key.status === 'active' && (key.expiresAt === null || Date.parse(key.expiresAt) > clock());

  // Applies the policy; answers what was done (`notify` when nothing was changed).
  const apply = async (key: ManagedKey, action: LeakAction, report: ReportedToken): Promise<LeakAction> => {
    const reason = reasonFor(safeUrl(report.url, report.token));
    if (action === 'revoke') {
      if (key.status === 'revoked') return 'notify';
      await manager.revoke(key.id, { actor: GITHUB_ACTOR });
      return 'revoke';
    }
    if (!stillWorks(key)) return 'notify';
    // Rotated with a grace already (by an earlier report): the grace runs out as configured.
    if (action === 'rotate' && key.rotatedTo !== null && key.expiresAt !== null) return 'notify';
    if (action === 'rotate' && key.rotatedTo === null) {
      const successor = await manager.rotate(key.id, { graceMs, actor: GITHUB_ACTOR });
      if (options.onRotated) await Promise.resolve(options.onRotated({ leaked: key, successor })).catch(() => {});
      return 'rotate';
    }
    // `rotate` of a key rotated already (its successor is out, but it still works): suspend it instead.
    if (action === 'suspend' || action === 'rotate') {
      await manager.suspend(key.id, { reason, actor: GITHUB_ACTOR });
      return 'suspend';
    }
    return 'notify';
  };

  const record = async (key: ManagedKey, done: LeakAction, report: ReportedToken): Promise<void> => {
    const url = safeUrl(report.url, report.token);
    const at = new Date(clock()).toISOString();
    try {
      await manager.recordAudit({
        accountId: key.accountId,
        keyId: key.id,
        action: 'key.leaked',
        actor: GITHUB_ACTOR,
        changes: { leak: { before: null, after: { url, source: report.source, action: done } } },
      });
    } catch (err) {
      const errorCode = err instanceof KeygateError ? err.code : 'unknown';
      emit({
        type: 'audit.failed',
        keyId: key.id,
        accountId: key.accountId,
        hint: key.hint,
        at,
        action: 'key.leaked',
        errorCode,
      });
    }
    emit({
      type: 'key.leaked',
      keyId: key.id,
      accountId: key.accountId,
      hint: key.hint,
      at,
      url,
      source: report.source,
      action: done,
    });
  };

  const label = async (report: ReportedToken): Promise<'true_positive' | 'false_positive'> => {
    const key = await manager.findBySecret(report.token);
    if (!key) return 'false_positive';
    // Acted on within the window (this report replayed, or another of the same key): nothing more.
    if (await handledSince(manager, key, clock() - replayWindowMs, GITHUB_ACTOR)) return 'true_positive';
    const done = await apply(key, await decide(key), report);
    await record(key, done, report);
    return 'true_positive';
  };

  const answer = async (reports: readonly ReportedToken[]) => {
    const answers: Record<string, string>[] = [];
    for (const report of reports) {
      const name = feedback === 'token_raw' ? report.token : await sha256Hex(report.token);
      answers.push({ [feedback]: name, token_type: report.type, label: await label(report) });
    }
    return answers;
  };
  let queue: Promise<unknown> = Promise.resolve();

  return async (request: Request): Promise<Response> => {
    if (request.method !== 'POST') return problem('method_not_allowed', 'GitHub posts reports: use POST.');
    const body = await readCapped(request, maxBodyBytes);
    if (!body) return problem('payload_too_large', `The body is larger than ${maxBodyBytes} bytes.`);
    const signature = await checkSignature(request.headers, body, ring);
    if (signature === 'unavailable') {
      return problem('public_keys_unavailable', "GitHub's public keys could not be fetched. Retry later.");
    }
    if (signature === 'invalid') {
      return problem('invalid_signature', 'The body is not signed by one of GitHub’s published secret scanning keys.');
    }
    const reports = parseReports(body);
    if (!Array.isArray(reports)) return problem('invalid_payload', reports.problem);
    // Reports are acted on one at a time in this process, so that a token in two concurrent bodies
    // (GitHub retrying) or twice in one body is acted on once.
    const done = queue.then(() => answer(reports));
    queue = done.catch(() => {});
    try {
      return feedbackResponse(await done);
    } catch (err) {
      if (err instanceof KeygateError && err.code === 'key_store_unavailable') {
        return problem('key_store_unavailable', 'The key store could not be reached. Retry later.');
      }
      return problem('report_failed', 'The report could not be acted on. Retry later.');
    }
  };
}

/** Suspend a live key, only report a test key. */
function defaultPolicy(key: ManagedKey): LeakAction {
  return key.mode === 'live' ? 'suspend' : 'notify';
}
