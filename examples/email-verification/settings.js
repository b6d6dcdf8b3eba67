// Start-up settings from the environment. A setting that would make the service unsafe or unusable
// stops it before anything opens, with a message that says why and what to set instead.
import { BlockList, isIP } from 'node:net';
import { MAX_TRUSTED_SHARE, NAMED_RANGES, trustedShare } from './trust-coverage.js';

/**
 * A setting the service refuses to start with; `setting` names it (`PORT`, `TRUST_PROXY`).
 *
 * @example
 * try { await main(); } catch (err) { if (err instanceof SettingError) console.error(err.message); }
 */
export class SettingError extends Error {
  /** @param {string} setting @param {string} message */
  constructor(setting, message) {
    super(message);
    this.name = 'SettingError';
    /** @type {'invalid_setting'} */
    this.code = 'invalid_setting';
    this.setting = setting;
  }
}

/**
 * `PORT`: a whole number from 0 (any free port) to 65535.
 *
 * @param {string | undefined} value
 * @returns {number} default `3000`
 * @example
 * portOf('8080'); // 8080
 */
export function portOf(value) {
  const port = Number(value ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new SettingError('PORT', `PORT must be a whole number from 0 to 65535, got ${value}.`);
  }
  return port;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/**
 * Whether only this machine can connect to a server listening on `host`.
 *
 * @param {string} host a `HOST` value: an address or a name
 * @example
 * isLoopbackHost('127.0.0.1'); // true
 * isLoopbackHost('0.0.0.0');   // false: every interface
 */
export function isLoopbackHost(host) {
  if (host === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * `TRUST_PROXY`: which proxy may tell the service the client's address in `X-Forwarded-For`. It must
 * name the proxy (addresses or CIDRs, comma-separated, or `loopback`, `linklocal`, `uniquelocal`).
 *
 * - A hop count or `true` trusts whoever connects, so it is refused unless `host` is a loopback
 *   address: on a port others can reach, a client could connect directly, send `X-Forwarded-For`
 *   with an address on a key's allow list, and pass it.
 * - A list is refused, whatever `host` is, when it trusts more than 1/256 of the public IPv4 space
 *   (a /8's worth of addresses in total; IPv4-mapped IPv6 ranges such as `::ffff:0:0/96` count as
 *   IPv4) or more than 1/256 of the public IPv6 space. Private, shared (`100.64.0.0/10`), loopback,
 *   link-local, multicast and reserved addresses are not counted, so `10.0.0.0/8` and Express's
 *   named ranges pass. No proxy fleet is that large, and a range that wide would also trust the
 *   `X-Forwarded-For` entries a client sends through the proxy.
 *
 * @param {string | undefined} value
 * @param {string} host the `HOST` the service listens on
 * @returns {boolean | number | string} Express's `trust proxy` value; default `false` (no proxy trusted)
 * @example
 * trustProxyOf('10.0.0.2', '0.0.0.0');              // '10.0.0.2'
 * trustProxyOf('1', '0.0.0.0');                     // throws SettingError (setting 'TRUST_PROXY')
 * trustProxyOf('0.0.0.0/1,128.0.0.0/1', '0.0.0.0'); // throws SettingError: covers all of IPv4
 */
export function trustProxyOf(value, host) {
  if (value === undefined || value === '' || value === 'false') return false;
  // A hop count or `true` names no proxy: Express then trusts whatever address connects.
  const bare = value === 'true' ? true : /^\d+$/.test(value) ? Number(value) : undefined;
  if (bare !== undefined) {
    if (!isLoopbackHost(host)) throw new SettingError('TRUST_PROXY', unsafeTrust(value, host));
    return bare;
  }
  const entries = value.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => !Object.hasOwn(NAMED_RANGES, entry) && !isAddressOrCidr(entry));
  if (bad !== undefined) {
    throw new SettingError(
      'TRUST_PROXY',
      `TRUST_PROXY entry "${bad}" is not an address, a CIDR or one of loopback, linklocal, uniquelocal.`,
    );
  }
  const share = trustedShare(entries);
  const family = share.ipv4 > MAX_TRUSTED_SHARE ? 'IPv4' : share.ipv6 > MAX_TRUSTED_SHARE ? 'IPv6' : undefined;
  if (family !== undefined) {
    const percent = ((family === 'IPv4' ? share.ipv4 : share.ipv6) * 100).toFixed(1);
    throw new SettingError(
      'TRUST_PROXY',
      `TRUST_PROXY=${value} trusts X-Forwarded-For from ${percent}% of the ${family} address space in public ` +
        "addresses (at most 1/256, a /8, is allowed): any client there could claim an address on a key's " +
        'allow list and pass it. Name the proxy instead: TRUST_PROXY=10.0.0.2 (its addresses or CIDRs, ' +
        'comma-separated), or loopback, linklocal, uniquelocal.',
    );
  }
  return entries.join(',');
}

/** @param {string} value @param {string} host */
function unsafeTrust(value, host) {
  return (
    `TRUST_PROXY=${value} trusts X-Forwarded-For from whoever connects, and HOST=${host} lets clients connect ` +
    "directly: any of them could claim an address on a key's allow list and pass it. Name the proxy instead: " +
    'TRUST_PROXY=10.0.0.2 (its addresses or CIDRs, comma-separated), or TRUST_PROXY=loopback for a proxy on ' +
    'this machine (best with HOST=127.0.0.1).'
  );
}

/** @param {string} entry */
function isAddressOrCidr(entry) {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** Shortest dashboard secret accepted, in bytes (UTF-8): 256 bits, the HMAC-SHA-256 key size. */
export const MIN_DASHBOARD_SECRET_BYTES = 32;

/**
 * `KEYGATE_DASHBOARD_SECRET`: the secret that signs the dashboard's sign-in links, sessions and CSRF
 * tokens, at least 32 bytes. Unset, the service keeps its own (see `dashboard.js`); set but shorter
 * (an empty value too, often a variable that did not expand), it refuses to start rather than sign
 * with a guessable key or quietly use another one.
 *
 * @param {string | undefined} value
 * @returns {string | undefined} the secret, or undefined when the variable is not set
 * @example
 * dashboardSecretOf(process.env.KEYGATE_DASHBOARD_SECRET); // throws SettingError when shorter than 32 bytes
 */
export function dashboardSecretOf(value) {
  if (value === undefined) return undefined;
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes < MIN_DASHBOARD_SECRET_BYTES) {
    throw new SettingError(
      'KEYGATE_DASHBOARD_SECRET',
      `KEYGATE_DASHBOARD_SECRET must be at least ${MIN_DASHBOARD_SECRET_BYTES} bytes, got ${bytes}. Make one with ` +
        `node -e "console.log(crypto.randomBytes(32).toString('hex'))", or unset it and the service keeps its own ` +
        'in the data folder.',
    );
  }
  return value;
}
