import { redactKeys } from './keys.js';

// How a refused value appears in a message: quoted with keys cut out, or described without its content.

/**
 * A user-supplied value quoted for an error message: JSON-quoted, at most 80 characters, and with
 * anything shaped like an API key reduced to its prefix (and any run of 24 or more letters and digits
 * cut out), so a key pasted into the wrong field is never echoed back.
 *
 * @example
 * quote('mk_live_abcd...') // '"mk_live_…"'
 */
export function quote(value: unknown): string {
  let text = typeof value === 'string' ? value : String(value);
  text = redactKeys(text);
  if (text.length > 80) text = `${text.slice(0, 77)}...`;
  return JSON.stringify(text);
}

/**
 * What kind of value a refused input was, without its content: for messages about a value that may
 * be a secret pasted into the wrong place (a mode, an option).
 *
 * @example
 * describeValue('mk_live_…') // 'a string of 46 characters'
 * describeValue([1, 2])      // 'an array of 2 items'
 * describeValue(-1)          // '-1'
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  if (Array.isArray(value)) return `an array of ${value.length} items`;
  return value === null ? 'null' : typeof value === 'number' ? String(value) : `a value of type ${typeof value}`;
}

/**
 * A refused choice (a mode, a kind) for an error message: quoted when it is too short to be a key (at
 * most 16 visible ASCII characters), else described like {@link describeValue}, so `"prod"` is shown
 * back and a pasted key is not.
 *
 * @example
 * describeChoice('prod')      // '"prod"'
 * describeChoice('mk_live_…') // 'a string of 46 characters'
 */
export function describeChoice(value: unknown): string {
  if (typeof value === 'string' && /^[\x21-\x7e]{1,16}$/.test(value)) return JSON.stringify(value);
  return describeValue(value);
}
