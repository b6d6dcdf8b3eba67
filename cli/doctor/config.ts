// `keygate doctor`'s checks of the secrets the CLI is configured with: the pepper and the dashboard secret.
import { MIN_SECRET_BYTES } from '../../dashboard/security/crypto.js';
import { findDashboardSecret } from '../dashboard-secret.js';
import type { Finding } from './finding.js';

/** Fewest bytes a pepper should have, as the dashboard secret: 32 (256 bits, an HMAC-SHA-256 key). */
export const MIN_PEPPER_BYTES = 32;

const MAKE_SECRET = `node -e "console.log(crypto.randomBytes(32).toString('hex'))"`;

/**
 * Whether a pepper is set (`--pepper`, else `KEYGATE_PEPPER`), and long enough: `no_pepper` (warn),
 * `pepper_short` (warn, under 32 bytes) or `pepper` (ok). The value is never shown.
 *
 * @example
 * checkPepper(undefined) // [{ id: 'no_pepper', severity: 'warn', ... }]
 */
export function checkPepper(pepper: string | undefined): Finding[] {
  if (!pepper) {
    return [
      {
        id: 'no_pepper',
        severity: 'warn',
        message:
          'no pepper (neither --pepper nor KEYGATE_PEPPER is set): key digests are plain SHA-256, so a copy of the key table can be checked against keys offline',
        fix:
          `make one with ${MAKE_SECRET}, give the service (authenticate and KeyManager \`pepper\`) and the CLI the same ` +
          'value in KEYGATE_PEPPER; existing keys were hashed without it, so re-create them (or rotate them) after the switch',
      },
    ];
  }
  const bytes = Buffer.byteLength(pepper, 'utf8');
  if (bytes < MIN_PEPPER_BYTES) {
    return [
      {
        id: 'pepper_short',
        severity: 'warn',
        message: `the pepper is ${bytes} bytes; a guessable pepper protects little`,
        fix: `use ${MIN_PEPPER_BYTES} random bytes or more (${MAKE_SECRET}); keys hashed with the old pepper must then be re-created`,
      },
    ];
  }
  return [{ id: 'pepper', severity: 'ok', message: `a pepper is set (${bytes} bytes)`, fix: '' }];
}

/**
 * The dashboard secret as `keygate dashboard link` finds it (`KEYGATE_DASHBOARD_SECRET`, else
 * `<dir>/dashboard-secret` of a `pglite:<dir>` store): `dashboard_secret_short` (error, under 32 bytes:
 * the dashboard refuses it), `dashboard_secret_unreadable` (warn), or `dashboard_secret` (ok, also when
 * there is none to check). The value is never shown.
 *
 * @example
 * await checkDashboardSecret({ KEYGATE_DASHBOARD_SECRET: 'short' }, 'pglite:./.keygate') // [{ id: 'dashboard_secret_short', ... }]
 */
export async function checkDashboardSecret(
  env: Readonly<Record<string, string | undefined>>,
  storeUrl: string,
): Promise<Finding[]> {
  const found = await findDashboardSecret(env, storeUrl);
  if (found.secret === undefined) {
    if (found.problem === 'unreadable') {
      return [
        {
          id: 'dashboard_secret_unreadable',
          severity: 'warn',
          message: `${found.why}: the dashboard secret was not checked`,
          fix: 'let the user that runs the service (and keygate) read the file, or set KEYGATE_DASHBOARD_SECRET',
        },
      ];
    }
    return [{ id: 'dashboard_secret', severity: 'ok', message: `no dashboard secret to check: ${found.why}`, fix: '' }];
  }
  const bytes = Buffer.byteLength(found.secret, 'utf8');
  if (bytes < MIN_SECRET_BYTES) {
    return [
      {
        id: 'dashboard_secret_short',
        severity: 'error',
        message: `the dashboard secret in ${found.from} is ${bytes} bytes; the dashboard needs at least ${MIN_SECRET_BYTES} (its sign-in links and sessions are signed with it)`,
        fix: `replace it with ${MIN_SECRET_BYTES} random bytes (${MAKE_SECRET}) and restart the service; open sessions and links end`,
      },
    ];
  }
  return [
    {
      id: 'dashboard_secret',
      severity: 'ok',
      message: `the dashboard secret in ${found.from} is ${bytes} bytes`,
      fix: '',
    },
  ];
}
