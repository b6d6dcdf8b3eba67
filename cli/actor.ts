import { userInfo } from 'node:os';
import type { AuditActor } from 'keygate';

// A user name keygate can record as it is: letters, digits and a few separators (DOMAIN\user, a.b@c).
const PLAIN_NAME = /^[\p{L}\p{N}._@\\$-]{1,200}$/u;

/**
 * Who runs the CLI, for the audit log: `{ type: 'cli', id }` with the operating system's user name
 * (`os.userInfo()`, else `USER` or `USERNAME`), or `{ type: 'cli' }` when there is none fit to record.
 *
 * @example
 * cliActor(process.env) // { type: 'cli', id: 'alice' }
 */
export function cliActor(env: Record<string, string | undefined>): AuditActor {
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    // No passwd entry for this uid (a container's arbitrary user): fall back to the environment.
    name = env.USER ?? env.USERNAME;
  }
  return name && PLAIN_NAME.test(name) ? { type: 'cli', id: name } : { type: 'cli' };
}
