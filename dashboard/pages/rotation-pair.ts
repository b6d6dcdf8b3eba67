import { html } from 'hono/html';
import type { PublicKey } from 'keygate';
import type { Dash } from '../context.js';

/** The keys on either side of a rotation, by id. */
export type Partners = ReadonlyMap<string, PublicKey>;

/**
 * The rotation partners of `keys` (the key each replaced, the key that replaced it) by id: those
 * among `keys` as they are, the others read once each. Only keys of `accountId`, so a page never
 * names another account's key.
 *
 * @example
 * const partners = await partnersOf(dash, 'acct_1', [key]); // partners.get(key.rotatedFrom)?.name
 */
export async function partnersOf(dash: Dash, accountId: string, keys: readonly PublicKey[]): Promise<Partners> {
  const known = new Map(keys.map((k) => [k.id, k]));
  const wanted = new Set(keys.flatMap((k) => [k.rotatedFrom, k.rotatedTo]).filter((id): id is string => !!id));
  const missing = [...wanted].filter((id) => !known.has(id));
  const read = await Promise.all(missing.map((id) => dash.manager.get(id)));
  const out = new Map<string, PublicKey>();
  for (const key of [...keys, ...read]) {
    if (key && wanted.has(key.id) && key.accountId === accountId) out.set(key.id, key);
  }
  return out;
}

/**
 * The other key of a rotation as a link: its name in quotes and its hint, since both keys of a
 * rotation carry the same name; its id when it cannot be read.
 *
 * @example
 * html`rotated from ${partnerLink(dash, key.rotatedFrom, partners)}`
 */
export function partnerLink(dash: Dash, id: string, partners: Partners) {
  const partner = partners.get(id);
  const href = dash.path(`/keys/${encodeURIComponent(id)}`);
  return partner
    ? html`<a href="${href}">“${partner.name}”</a> <code>${partner.hint}</code>`
    : html`<a href="${href}"><code>${id}</code></a>`;
}
