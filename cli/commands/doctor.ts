// `keygate doctor`: checks a deployment for the mistakes that quietly weaken API-key auth, from
// outside (a running service, over HTTP) and from inside (the store's keys, the CLI's secrets).
import { isIP } from 'node:net';
import { InvalidInputError } from 'keygate';
import { quote } from 'keygate/store-kit';
import { command } from '../command.js';
import { checkDashboardSecret, checkPepper } from '../doctor/config.js';
import { type Finding, formatFindings, sortFindings } from '../doctor/finding.js';
import { DEFAULT_SPOOF, probeForwardedFor } from '../doctor/forwarded-for.js';
import { checkKeys, DEFAULT_UNUSED_FOR_MS, type Requirement } from '../doctor/keys.js';
import { DOCTOR_ERROR_EXIT } from '../errors.js';

function requirement(flag: string, value: string | undefined): Requirement {
  if (value === undefined || value === 'live' || value === 'all') return value;
  throw new InvalidInputError(`--${flag}`, `--${flag} takes live or all, got ${quote(value)}`);
}

function probeUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError('--url', `--url takes an http:// or https:// URL, got ${quote(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InvalidInputError('--url', `--url takes an http:// or https:// URL, got ${quote(url)}`);
  }
  return parsed.toString();
}

// The probe key: a test key only, so that the check can never spend, bill or lock out real traffic.
function probeKey(key: string | undefined): string {
  if (key === undefined || key === '') {
    throw new InvalidInputError(
      '--key',
      '--url needs a test key: --key, or KEYGATE_DOCTOR_KEY (keeps it out of shell history)',
    );
  }
  const mode = /^[a-z][a-z0-9]{0,15}_(live|test)_[0-9A-Za-z]+$/.exec(key)?.[1];
  if (mode === undefined) throw new InvalidInputError('--key', '--key is not an API key (<prefix>_test_…)');
  if (mode === 'live') {
    throw new InvalidInputError(
      '--key',
      'doctor takes a test key made for the check, never a live key: keygate keys create --mode test --allow ' +
        `${DEFAULT_SPOOF}/32 ...`,
    );
  }
  return key;
}

/** `keygate doctor [--url URL --key KEY [--spoof IP] [--header NAME]] [--account A] [...]`. */
export const DOCTOR_COMMAND = command({
  path: ['doctor'],
  args: [],
  summary:
    'Checks a deployment and prints what to fix: a running service for a forwarded-for header believed from ' +
    "anyone (--url), the store's keys (--account) and the pepper and dashboard secret.",
  details: [
    'From outside (--url): doctor sends GET requests to URL with a test key, once plainly and once each with',
    'X-Forwarded-For, Forwarded, X-Real-IP, CF-Connecting-IP, True-Client-IP and Fly-Client-IP claiming --spoof',
    `(default ${DEFAULT_SPOOF}). Prepare the key first:`,
    `  keygate keys create --account A --name doctor --mode test --allow ${DEFAULT_SPOOF}/32`,
    "Its allow list must hold the spoofed address only, not this machine's: the plain request must get 403",
    'ip_not_allowed, else doctor exits 1. Run it from where clients connect (through your proxy, not from an',
    'address the service trusts as a proxy). Pass the key in KEYGATE_DOCTOR_KEY rather than --key to keep it out',
    'of shell history; it is never printed. Revoke the key afterwards.',
    '',
    'From inside (the default; with --url, only when --account is given): the pepper (--pepper or',
    'KEYGATE_PEPPER), the dashboard secret (KEYGATE_DASHBOARD_SECRET, else <dir>/dashboard-secret of a',
    "pglite:<dir> store) and, with --account, that account's keys: live keys without an allow list, or with one",
    'that admits every IPv4 or every IPv6 address (0.0.0.0/0, ::/0, or entries that add up to it), or without a',
    'rate limit (warnings; errors for the modes --require-allow-list / --require-rate-limit name), keys due for',
    'rotation (90 days old) and keys unused for --unused-for (default 90d).',
    '',
    'Each finding is one line: severity (error, warn, ok), id, what is wrong, then the fix. --json prints an',
    `array of { id, severity, message, fix, keyId? }. Exit codes: 0 no error finding, ${DOCTOR_ERROR_EXIT} an error`,
    'finding, 1 the check could not run as given, 4 the store failed.',
  ].join('\n'),
  flags: {
    url: {
      kind: 'string',
      value: 'URL',
      help: 'a GET endpoint of the running service that keygate guards, e.g. http://127.0.0.1:3000/v1/account',
    },
    key: {
      kind: 'string',
      value: 'KEY',
      help: `with --url: the test key whose allow list is ${DEFAULT_SPOOF}/32 only (default: KEYGATE_DOCTOR_KEY)`,
    },
    spoof: {
      kind: 'string',
      value: 'IP',
      help: `with --url: the address the forwarding headers claim, on the key's allow list (default ${DEFAULT_SPOOF})`,
    },
    header: {
      kind: 'string',
      value: 'NAME',
      help: 'with --url: the header the service reads keys from; authorization sends Bearer (default x-api-key)',
    },
    account: { kind: 'string', value: 'A', help: "check this account's keys in the store" },
    'require-allow-list': {
      kind: 'string',
      value: 'live|all',
      help: 'a key of these modes without an allow list, or with one that admits everyone, is an error (default: live ones are warnings)',
    },
    'require-rate-limit': {
      kind: 'string',
      value: 'live|all',
      help: 'a key of these modes without a rate limit of its own is an error (default: live ones are warnings)',
    },
    'unused-for': {
      kind: 'duration',
      example: '180d',
      help: 'report active keys with no traffic for this long, 90 days unless given',
    },
  },
  async run({ flags, env, storeUrl, pepper, manager }) {
    const requireAllowList = requirement('require-allow-list', flags['require-allow-list']);
    const requireRateLimit = requirement('require-rate-limit', flags['require-rate-limit']);
    const account = flags.account;
    if (account === undefined && (requireAllowList || requireRateLimit || flags['unused-for'] !== undefined)) {
      const flag = requireAllowList ? 'require-allow-list' : requireRateLimit ? 'require-rate-limit' : 'unused-for';
      throw new InvalidInputError(`--${flag}`, `--${flag} checks an account's keys: give --account too`);
    }
    const spoof = flags.spoof ?? DEFAULT_SPOOF;
    if (isIP(spoof) === 0) throw new InvalidInputError('--spoof', `--spoof takes an IP address, got ${quote(spoof)}`);
    const probe =
      flags.url === undefined
        ? undefined
        : {
            url: probeUrl(flags.url),
            key: probeKey(flags.key ?? env.KEYGATE_DOCTOR_KEY),
            spoof,
            header: flags.header ?? 'x-api-key',
          };
    if (!probe && (flags.key !== undefined || flags.spoof !== undefined || flags.header !== undefined)) {
      throw new InvalidInputError('--url', '--key, --spoof and --header probe a running service: give --url too');
    }

    const findings: Finding[] = [];
    if (probe) findings.push(...(await probeForwardedFor(probe)));
    if (!probe || account !== undefined) {
      findings.push(...checkPepper(pepper), ...(await checkDashboardSecret(env, storeUrl)));
    }
    if (account !== undefined) {
      findings.push(
        ...(await checkKeys(await manager(), account, {
          requireAllowList,
          requireRateLimit,
          unusedForMs: flags['unused-for'] ?? DEFAULT_UNUSED_FOR_MS,
          now: Date.now(),
        })),
      );
    }
    const sorted = sortFindings(findings);
    const failed = sorted.some((f) => f.severity === 'error');
    return { json: sorted, text: formatFindings(sorted), ...(failed ? { exitCode: DOCTOR_ERROR_EXIT } : {}) };
  },
});
