// `keygate doctor --url`: does a running service take the client's address from a header anyone can
// send? Probed with a key whose allow list holds only a spoofed address: a request from this machine
// must be refused with 403 ip_not_allowed; the same request claiming the spoofed address in a
// forwarding header must be refused the same way. If it passes, the service trusts the header from anywhere.
import { DENIALS, InvalidInputError } from 'keygate';
import { quote } from 'keygate/store-kit';
import type { Finding } from './finding.js';

/** The address a probe claims by default: 203.0.113.7, in TEST-NET-3 (documentation only, never a real client). */
export const DEFAULT_SPOOF = '203.0.113.7';

/** How long one probe request may take, in milliseconds: 10,000. */
export const PROBE_TIMEOUT_MS = 10_000;

/** What `probeForwardedFor` needs. */
export interface ProbeOptions {
  /** A URL of the service that authenticates with keygate and answers GET (no side effects). */
  readonly url: string;
  /** A test key whose allow list holds `spoof` and not this machine's address. Never printed. */
  readonly key: string;
  /** The address the forwarding headers claim. */
  readonly spoof: string;
  /** The header the service reads the key from; `authorization` sends `Bearer <key>`. */
  readonly header: string;
}

// Denials that keygate gives only once the allow list has passed (see DENIALS' check order): such an
// answer to a spoofed request means the spoofed address was believed.
const AFTER_ALLOW_LIST = new Set([
  'insufficient_permissions',
  'rate_limited',
  'rate_limiter_unavailable',
  'insufficient_credits',
  'credit_ledger_unavailable',
  'invalid_credit_cost',
]);

/** The headers a probe spoofs, with what a service that believes each one should do instead. */
const SPOOFS: ReadonlyArray<{ header: string; value: (ip: string) => string; fix: string }> = [
  {
    header: 'X-Forwarded-For',
    value: (ip) => ip,
    fix:
      "trust only your proxy's address: Express `app.set('trust proxy', 'loopback')` (or the proxy's address or " +
      "CIDR, e.g. '10.0.0.2'), Fastify `trustProxy: '10.0.0.2'`, never `true` or a hop count on a port clients " +
      'can reach; and have the proxy append the peer address (nginx `proxy_set_header X-Forwarded-For ' +
      '$proxy_add_x_forwarded_for`)',
  },
  {
    header: 'Forwarded',
    value: (ip) => (ip.includes(':') ? `for="[${ip}]"` : `for=${ip}`),
    fix:
      "read `Forwarded` only from your proxy's address (and have the proxy replace it: nginx `proxy_set_header " +
      'Forwarded "for=$remote_addr"`), or do not read it at all; the address given to keygate must be the peer ' +
      'address unless the peer is your proxy',
  },
  {
    header: 'X-Real-IP',
    value: (ip) => ip,
    fix:
      "read `X-Real-IP` only when the peer is your proxy's address, and have the proxy overwrite it (nginx " +
      '`proxy_set_header X-Real-IP $remote_addr`)',
  },
  {
    header: 'CF-Connecting-IP',
    value: (ip) => ip,
    fix:
      'read `CF-Connecting-IP` (`clientIp.cloudflare` of keygate/fetch) only where Cloudflare sets it: on ' +
      "Workers, or on an origin that accepts connections from Cloudflare's addresses only (a firewall on " +
      "Cloudflare's published ranges, Cloudflare Tunnel or Authenticated Origin Pulls); anywhere else give " +
      'keygate the peer address',
  },
  {
    header: 'True-Client-IP',
    value: (ip) => ip,
    fix:
      'read `True-Client-IP` only when the peer is the CDN that sets it (Akamai, Cloudflare Enterprise) and the ' +
      'origin accepts connections from that CDN only; otherwise give keygate the peer address',
  },
  {
    header: 'Fly-Client-IP',
    value: (ip) => ip,
    fix:
      "read `Fly-Client-IP` only on Fly.io, behind Fly's proxy, which overwrites it, with no public port that " +
      'bypasses the proxy; anywhere else give keygate the peer address',
  },
];

/** A response as the probe sees it: its status and keygate's denial code, if it is one of keygate's denials. */
interface Answer {
  readonly status: number;
  readonly denial: string | undefined;
}

const describe = (a: Answer) => `${a.status}${a.denial ? ` ${a.denial}` : ''}`;

async function ask(options: ProbeOptions, extra: Record<string, string>): Promise<Answer> {
  const keyHeader = options.header.toLowerCase();
  const headers: Record<string, string> = {
    ...extra,
    [keyHeader]: keyHeader === 'authorization' ? `Bearer ${options.key}` : options.key,
    accept: 'application/json, application/problem+json',
  };
  let res: Response;
  try {
    res = await fetch(options.url, {
      method: 'GET',
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new InvalidInputError('--url', `could not reach ${quote(options.url)}: ${why}`);
  }
  const text = await res.text().catch(() => '');
  let code: unknown;
  try {
    code = (JSON.parse(text) as { code?: unknown })?.code;
  } catch {
    code = undefined;
  }
  const denial = typeof code === 'string' && code in DENIALS ? code : undefined;
  return { status: res.status, denial };
}

/**
 * Sends one plain GET with the key, then one per forwarding header (`X-Forwarded-For`, `Forwarded`,
 * `X-Real-IP`, `CF-Connecting-IP`, `True-Client-IP`, `Fly-Client-IP`) claiming `spoof`, and compares. Findings: `forwarded_for_spoofable` (error, one per
 * header the service believed), `forwarded_for_inconclusive` (warn: a spoofed request was refused for
 * another reason), or `forwarded_for` (ok). Never prints the key.
 *
 * @throws InvalidInputError (field `--url` or `--key`) when the probe cannot tell: the service cannot
 *   be reached, or the plain request is not refused with 403 `ip_not_allowed`.
 * @example
 * await probeForwardedFor({ url: 'http://127.0.0.1:3000/v1/account', key, spoof: '203.0.113.7', header: 'x-api-key' });
 */
export async function probeForwardedFor(options: ProbeOptions): Promise<Finding[]> {
  const plain = await ask(options, {});
  if (plain.denial !== 'ip_not_allowed') {
    throw new InvalidInputError(
      '--key',
      `the request without a forwarding header was answered ${describe(plain)}, not 403 ip_not_allowed, so ` +
        `spoofing cannot be told apart. doctor needs a test key the service at ${quote(options.url)} knows, ` +
        `whose allow list holds ${options.spoof}/32 only (not this machine's address): keygate keys update ` +
        `<id> --allow ${options.spoof}/32`,
    );
  }
  const findings: Finding[] = [];
  const safe: string[] = [];
  for (const spoof of SPOOFS) {
    const answer = await ask(options, { [spoof.header]: spoof.value(options.spoof) });
    if (answer.denial === 'ip_not_allowed') {
      safe.push(spoof.header);
    } else if (answer.denial === undefined || AFTER_ALLOW_LIST.has(answer.denial)) {
      findings.push({
        id: 'forwarded_for_spoofable',
        severity: 'error',
        message:
          `a request claiming ${options.spoof} in ${spoof.header} passed the key's allow list (answered ` +
          `${describe(answer)}; without the header: 403 ip_not_allowed): any client can pass any allow list ` +
          'and get its own failed-attempt and rate-limit counts by sending that header (unless this machine is ' +
          'itself a proxy the service trusts: then run doctor from outside)',
        fix: spoof.fix,
      });
    } else {
      findings.push({
        id: 'forwarded_for_inconclusive',
        severity: 'warn',
        message: `a request claiming ${options.spoof} in ${spoof.header} was answered ${describe(answer)}: cannot tell whether the header is believed`,
        fix: 'wait for the refusal to lift (a failed-attempt block or a rate limit), then run doctor again',
      });
    }
  }
  if (safe.length) {
    findings.push({
      id: 'forwarded_for',
      severity: 'ok',
      message:
        `a request claiming ${options.spoof} in ${safe.join(', ')} was refused like one without (403 ip_not_allowed); ` +
        `this holds only if the key's allow list holds ${options.spoof}`,
      fix: '',
    });
  }
  return findings;
}
