// Does a domain accept mail? One DNS question (MX, then A/AAAA for an implicit MX), bounded by a
// timeout, answered `unknown` whenever DNS cannot say. The resolver is injected so tests need no network.
import { Resolver } from 'node:dns/promises';

/**
 * The part of `node:dns/promises`' Resolver the lookup uses. Failures carry Node's DNS error codes
 * (`ENODATA`: no record of that type, `ENOTFOUND`: no such domain).
 *
 * @typedef {object} MxResolver
 * @property {(domain: string) => Promise<Array<{ exchange: string, priority: number }>>} resolveMx
 * @property {(domain: string) => Promise<string[]>} [resolve4]
 * @property {(domain: string) => Promise<string[]>} [resolve6]
 */

/**
 * `found`: MX records (hosts by priority); `implicit`: no MX but an address record, which RFC 5321
 * 5.1 lets receive mail; `null`: the domain says it takes no mail (RFC 7505); `none`: no such domain,
 * or neither MX nor address; `unknown`: DNS failed or timed out.
 *
 * @typedef {{ status: 'found' | 'implicit' | 'null' | 'none' | 'unknown', hosts: string[] }} MxResult
 */

/**
 * The system resolver, asking each server once, with Node's own per-query timeout.
 *
 * @param {number} timeoutMs milliseconds
 * @returns {MxResolver}
 */
export function systemResolver(timeoutMs) {
  return new Resolver({ timeout: timeoutMs, tries: 1 });
}

/**
 * Builds the MX lookup: concurrent questions for one domain share one DNS query, and definite
 * answers are cached (`unknown` never is, so a DNS outage does not outlive itself).
 *
 * @param {object} [options]
 * @param {MxResolver} [options.resolver] default: the system resolver
 * @param {number} [options.timeoutMs] milliseconds for the whole lookup of one domain. Default `3000`.
 * @param {number} [options.cacheTtlMs] milliseconds a definite answer is reused. Default `300_000` (5 minutes).
 * @param {number} [options.cacheMax] domains kept; the oldest goes first. Default `10_000`.
 * @returns {(asciiDomain: string) => Promise<MxResult>}
 * @example
 * const lookupMx = createMxLookup({ resolver: { resolveMx: async () => [{ exchange: 'mx.example.com', priority: 10 }] } });
 * await lookupMx('example.com'); // { status: 'found', hosts: ['mx.example.com'] }
 */
export function createMxLookup({ resolver, timeoutMs = 3000, cacheTtlMs = 300_000, cacheMax = 10_000 } = {}) {
  const dns = resolver ?? systemResolver(timeoutMs);
  /** @type {Map<string, { at: number, answer: Promise<MxResult> }>} */
  const cache = new Map();

  return function lookupMx(asciiDomain) {
    const now = Date.now();
    const hit = cache.get(asciiDomain);
    if (hit && now - hit.at < cacheTtlMs) return hit.answer;
    const answer = withTimeout(ask(dns, asciiDomain), timeoutMs);
    cache.delete(asciiDomain);
    if (cache.size >= cacheMax) cache.delete(cache.keys().next().value ?? '');
    cache.set(asciiDomain, { at: now, answer });
    answer.then((result) => {
      if (result.status === 'unknown' && cache.get(asciiDomain)?.answer === answer) cache.delete(asciiDomain);
    });
    return answer;
  };
}

/**
 * @param {MxResolver} dns
 * @param {string} domain
 * @returns {Promise<MxResult>}
 */
async function ask(dns, domain) {
  try {
    const records = await dns.resolveMx(domain);
    if (records.length === 1 && ['', '.'].includes(records[0]?.exchange ?? '')) return { status: 'null', hosts: [] };
    const hosts = records
      .filter((r) => r.exchange !== '' && r.exchange !== '.')
      .sort((a, b) => a.priority - b.priority)
      .map((r) => r.exchange.toLowerCase());
    if (hosts.length > 0) return { status: 'found', hosts };
  } catch (err) {
    if (code(err) === 'ENOTFOUND') return { status: 'none', hosts: [] };
    if (code(err) !== 'ENODATA') return { status: 'unknown', hosts: [] };
  }
  // No MX record: an address record makes the domain its own mail host (RFC 5321 5.1).
  for (const family of /** @type {const} */ (['resolve4', 'resolve6'])) {
    const resolve = dns[family];
    if (!resolve) continue;
    try {
      if ((await resolve.call(dns, domain)).length > 0) return { status: 'implicit', hosts: [domain] };
    } catch (err) {
      if (code(err) !== 'ENODATA' && code(err) !== 'ENOTFOUND') return { status: 'unknown', hosts: [] };
    }
  }
  return { status: 'none', hosts: [] };
}

/**
 * @param {Promise<MxResult>} answer
 * @param {number} ms
 * @returns {Promise<MxResult>}
 */
function withTimeout(answer, ms) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ status: 'unknown', hosts: [] }), ms);
  });
  return Promise.race([answer, late]).finally(() => clearTimeout(timer));
}

/** @param {unknown} err */
function code(err) {
  return /** @type {{ code?: string }} */ (err)?.code;
}
