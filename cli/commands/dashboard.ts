// `keygate dashboard link`: a one-time sign-in link to the developer dashboard, made from the dashboard
// secret alone. It never opens the store, so it works while the service holds the embedded folder.
import { InvalidInputError } from 'keygate';
// From the sources (bundled into the CLI): signing a link needs Web Crypto only, not the dashboard's
// web framework, so the command works where `hono` is not installed.
import { createSignInLink } from '../../dashboard/security/sign-in-token.js';
import { command } from '../command.js';
import { findDashboardSecret } from '../dashboard-secret.js';
import { DEFAULT_STORE } from '../open-store.js';

/**
 * The dashboard secret: `KEYGATE_DASHBOARD_SECRET` when set; else, for a `pglite:<dir>` store, the
 * contents of `<dir>/dashboard-secret` (the file only: the database is never opened).
 */
async function dashboardSecret(env: Record<string, string | undefined>, store: string): Promise<string> {
  const found = await findDashboardSecret(env, store);
  if (found.secret !== undefined) return found.secret;
  const hint =
    found.problem === 'unset'
      ? 'set KEYGATE_DASHBOARD_SECRET to the secret the service uses (only a pglite:<dir> store keeps one in a file)'
      : `${found.why}. Start the service on that folder once (it writes the file), or set ` +
        'KEYGATE_DASHBOARD_SECRET to the secret the service uses';
  throw new InvalidInputError('secret', `no dashboard secret: ${hint}`);
}

// The option names createSignInLink reports, as the flags the user typed.
const FLAG_OF: Record<string, string> = { accountId: '--account', baseUrl: '--base-url', basePath: '--base-path' };

/** `createSignInLink`'s refusal of an option, told in terms of the flag it came from. */
function inFlagTerms(err: unknown): unknown {
  const flag = err instanceof InvalidInputError && err.field ? FLAG_OF[err.field] : undefined;
  if (!flag) return err;
  let message = (err as InvalidInputError).message;
  for (const [option, name] of Object.entries(FLAG_OF)) message = message.replaceAll(option, name);
  return new InvalidInputError(flag, message);
}

/** `keygate dashboard link --account A [--base-url URL] [--base-path PATH]`. */
export const DASHBOARD_LINK_COMMAND = command({
  path: ['dashboard', 'link'],
  args: [],
  summary:
    'Prints a one-time sign-in link to the dashboard (15 minutes, usable once), from the dashboard secret ' +
    'alone: the store is never opened.',
  flags: {
    account: { kind: 'string', value: 'A', required: true, help: 'the account the link signs in to' },
    'base-url': {
      kind: 'string',
      value: 'URL',
      help: 'where the service is reached, an origin (default http://127.0.0.1:3000)',
    },
    'base-path': { kind: 'string', value: 'PATH', help: 'where the dashboard is mounted (default /dashboard)' },
    // The global --store, declared here too so the command sees it: only its folder is read.
    store: {
      kind: 'string',
      value: 'URL',
      help:
        'with pglite:<dir>, the secret is read from <dir>/dashboard-secret when KEYGATE_DASHBOARD_SECRET is ' +
        `not set (default: KEYGATE_STORE, else ${DEFAULT_STORE})`,
    },
  },
  async run({ flags }) {
    const env = process.env;
    const secret = await dashboardSecret(env, flags.store ?? env.KEYGATE_STORE ?? DEFAULT_STORE);
    const url = await createSignInLink({
      secret,
      accountId: flags.account,
      baseUrl: flags['base-url'] ?? 'http://127.0.0.1:3000',
      basePath: flags['base-path'] ?? '/dashboard',
    }).catch((err) => Promise.reject(inFlagTerms(err)));
    return { json: { url }, text: url };
  },
});
