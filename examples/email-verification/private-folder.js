// The PGlite folder holds key digests and balances: no other user of the machine may read it.
import { chmod, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Mode of the folder and of every folder in it: owner only. */
export const FOLDER_MODE = 0o700;
/** Mode of every file in it: owner read and write. */
export const FILE_MODE = 0o600;

/**
 * Creates `dir` (and missing parents) owner-only, or makes an existing one owner-only, before the
 * database writes anything there: from then on other users cannot list or open what is inside,
 * whatever modes the files get.
 *
 * @param {string} dir
 * @example
 * await createPrivateFolder('./.keygate');
 */
export async function createPrivateFolder(dir) {
  await mkdir(dir, { recursive: true, mode: FOLDER_MODE });
  await chmod(dir, FOLDER_MODE);
}

/**
 * Sets every file under `dir` to {@link FILE_MODE} and every folder to {@link FOLDER_MODE}. PGlite
 * unpacks its initial database files world-writable (0666), and folders left by an earlier version
 * may be world-readable. Symbolic links are left alone (a chmod would follow them out of the folder).
 *
 * @param {string} dir
 * @example
 * await restrictFolder('./.keygate');
 */
export async function restrictFolder(dir) {
  await chmod(dir, FOLDER_MODE);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await restrictFolder(path);
    else if (entry.isFile()) await chmod(path, FILE_MODE).catch(unlessGone);
  }
}

/** A file the database removed since the listing needs no mode. @param {unknown} err */
function unlessGone(err) {
  if (/** @type {{ code?: string }} */ (err)?.code !== 'ENOENT') throw err;
}
