// The one place that knows what a key looks like in free text: a prefix and mode (`mk_live_`)
// followed by key characters, or a long run of key characters on its own (a key pasted without its
// prefix). A key id (`key_` and 20 characters) is neither.
const PREFIX_MODE = '[a-z][a-z0-9]{0,15}_(?:live|test)_';
const KEY_SHAPED = new RegExp(`(${PREFIX_MODE})[0-9A-Za-z]{4,}`, 'g');
const KEY_RUN = /[0-9A-Za-z]{24,}/g;
// Refusing a value as a pasted key asks for more than cutting does (a full random part: 24 or more
// characters after the prefix and mode, or 32 on their own), so that a long but ordinary name passes.
const SECRET_SHAPED = new RegExp(`(?:^|[^a-z0-9])${PREFIX_MODE}[0-9A-Za-z]{24,}|[0-9A-Za-z]{32,}`);

/**
 * Text with anything shaped like an API key cut down to its prefix and mode, and any run of 24 or
 * more letters and digits (a key's random part on its own) cut out: for messages, and every other
 * string an error carries, that may hold something a user or a driver echoed back. Key ids (`key_`
 * and 20 characters) are kept. Applying it twice changes nothing more.
 *
 * @example
 * redactKeys('bad value mk_live_4f9Qx...') // 'bad value mk_live_…'
 * redactKeys('no key with id key_0123456789abcdefghij') // unchanged
 */
export function redactKeys(text: string): string {
  return text.replace(KEY_SHAPED, '$1…').replace(KEY_RUN, '…');
}

/**
 * Whether a value looks like an API key pasted where something else belongs (a permission name):
 * its prefix and mode followed by at least 24 key characters, or 32 key characters on their own.
 *
 * @example
 * looksLikeKey('email:verify') // false
 * looksLikeKey(generateKey())  // true
 */
export function looksLikeKey(text: string): boolean {
  return SECRET_SHAPED.test(text);
}
