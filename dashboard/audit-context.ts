import type { Context } from 'hono';
import type { AuditContext } from 'keygate';
import type { Dash, DashEnv } from './context.js';

// An address the audit log can keep as it is: an IPv4 or IPv6 address (with a zone id) as the host
// resolved it. Anything else (a host's odd `clientIp`) is left out rather than refuse the change.
const ADDRESS = /^[0-9A-Za-z:.%_-]{1,64}$/;

/**
 * Who makes a change through the dashboard, for the audit log: actor `dashboard` with the signed-in
 * account (by link session or the host's `resolveAccount`), and the request's client address when
 * the host resolved one (`clientIp`, or the address `toNodeHandler` and `toFastifyPlugin` found).
 *
 * @example
 * await dash.manager.revoke(key.id, await auditContextOf(c, dash));
 */
export async function auditContextOf(c: Context<DashEnv>, dash: Dash, accountId?: string): Promise<AuditContext> {
  const address = await dash.clientIp(c.req.raw, c.env?.rest ?? []);
  const actor = { type: 'dashboard' as const, id: accountId ?? c.get('account') };
  return address && ADDRESS.test(address) ? { actor, address } : { actor };
}

/**
 * Writes `dashboard.signed_in` for a sign-in that succeeded. A failure is the host's to hear about
 * (`onError`); it never fails the sign-in.
 *
 * @example
 * await recordSignIn(c, dash, claims.accountId);
 */
export async function recordSignIn(c: Context<DashEnv>, dash: Dash, accountId: string): Promise<void> {
  try {
    await dash.manager.recordAudit({
      accountId,
      action: 'dashboard.signed_in',
      ...(await auditContextOf(c, dash, accountId)),
    });
  } catch (err) {
    dash.onError(err);
  }
}
