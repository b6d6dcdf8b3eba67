// Where the CLI finds the dashboard secret: the environment first, then the file the example service
// writes into its PGlite folder. Reading it never opens the store.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The file in a PGlite store folder where the example service keeps its generated dashboard secret. */
export const SECRET_FILE = 'dashboard-secret';

/**
 * A dashboard secret found (`from`: the variable or the file it came from), or why none was: no
 * variable and no folder (`unset`), no file in the folder (`missing`), or a file that could not be read.
 */
export type FoundSecret =
  | { readonly secret: string; readonly from: string }
  | { readonly secret: undefined; readonly problem: 'unset' | 'missing' | 'unreadable'; readonly why: string };

/**
 * The dashboard secret: `KEYGATE_DASHBOARD_SECRET` when set; else, for a `pglite:<dir>` store, the
 * contents of `<dir>/dashboard-secret`, trimmed (the file only: the database is never opened). When
 * there is none, `why` says so in a sentence fragment.
 *
 * @example
 * const found = await findDashboardSecret(process.env, 'pglite:./.keygate');
 * if (found.secret === undefined) console.error(`no dashboard secret: ${found.why}`);
 */
export async function findDashboardSecret(
  env: Readonly<Record<string, string | undefined>>,
  store: string,
): Promise<FoundSecret> {
  const given = env.KEYGATE_DASHBOARD_SECRET;
  if (given !== undefined) return { secret: given, from: 'KEYGATE_DASHBOARD_SECRET' };
  if (!store.startsWith('pglite:') || store === 'pglite:') {
    return {
      secret: undefined,
      problem: 'unset',
      why: 'KEYGATE_DASHBOARD_SECRET is not set (only a pglite:<dir> store keeps one in a file)',
    };
  }
  const file = join(store.slice('pglite:'.length), SECRET_FILE);
  try {
    return { secret: (await readFile(file, 'utf8')).trim(), from: file };
  } catch (err) {
    const code = (err as { code?: string }).code;
    const missing = code === 'ENOENT';
    const why = missing ? 'does not exist' : `cannot be read (${code ?? 'error'})`;
    return {
      secret: undefined,
      problem: missing ? 'missing' : 'unreadable',
      why: `KEYGATE_DASHBOARD_SECRET is not set and ${file} ${why}`,
    };
  }
}
