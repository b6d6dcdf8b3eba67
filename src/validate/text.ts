import type { InputIssue } from '#errors';
import { issue } from './issues.js';

// Characters that let a name or an account id disguise itself or forge the lines around it: C0 and C1
// controls and DEL (U+009B is a terminal's CSI), bidirectional embeddings and overrides
// (U+202A-U+202E) and isolates (U+2066-U+2069), line and paragraph separators (U+2028, U+2029), and,
// with the `u` flag, a surrogate that is not half of a pair.
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const DISGUISING = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]/u;

// A character that shows: not white space, not one of Unicode's default-ignorable characters
// (zero-width space and joiners U+200B-U+200D, word joiner U+2060, BOM U+FEFF, variation selectors,
// Hangul fillers, ...), not a combining mark (which shows only on a base character: U+0301 alone is
// nothing to see), not the blank braille pattern U+2800, and not a tag character.
const VISIBLE = /[^\s\p{Default_Ignorable_Code_Point}\p{M}\u2800\u{E0000}-\u{E007F}]/u;

// Tag characters (U+E0000-U+E007F) draw nothing and spell out hidden ASCII ("ASCII smuggling"): refused,
// except inside the three subdivision flags Unicode recommends (England, Scotland, Wales: U+1F3F4, the
// tags of `gbeng`, `gbsct` or `gbwls`, then CANCEL TAG U+E007F), whose tags spell only that code.
const TAG = /[\u{E0000}-\u{E007F}]/u;
const SUBDIVISION_FLAG =
  /\u{1F3F4}\u{E0067}\u{E0062}(?:\u{E0065}\u{E006E}\u{E0067}|\u{E0073}\u{E0063}\u{E0074}|\u{E0077}\u{E006C}\u{E0073})\u{E007F}/gu;

// Whether `value` holds a tag character outside one of the recommended subdivision flags.
const hasStrayTag = (value: string): boolean => TAG.test(value) && TAG.test(value.replace(SUBDIVISION_FLAG, ''));

/**
 * Why `value` cannot be a name or an account id (`field`), or `undefined` when it can: a string of
 * 1 to `max` characters once trimmed, with at least one visible character (a combining mark, the
 * blank braille pattern U+2800 and the default-ignorable characters are not: `no_visible_character`)
 * and none of the disguising ones above, nor a tag character outside the flags of England, Scotland
 * and Wales (`bad_character`). Ordinary Unicode (accents, also as e + U+0301, CJK, emoji and their ZWJ
 * sequences such as 👩‍💻, those three flags) passes.
 *
 * @example
 * textIssue('name', 'ci \u202egnp.exe', 200) // { field: 'name', reason: 'bad_character', ... }
 */
export function textIssue(field: string, value: unknown, max: number): InputIssue | undefined {
  if (typeof value !== 'string') return issue(field, 'wrong_type', `${field} must be a non-empty string`);
  if (value.trim() === '') return issue(field, 'empty', `${field} must be a non-empty string`);
  if (value.length > max) return issue(field, 'too_long', `${field} is longer than ${max} characters`);
  if (DISGUISING.test(value)) {
    return issue(
      field,
      'bad_character',
      `${field} contains a control, bidirectional-override or line-separator character, or a lone surrogate`,
    );
  }
  if (hasStrayTag(value)) {
    return issue(
      field,
      'bad_character',
      `${field} contains a tag character (U+E0000-U+E007F), which hides text; only the flags of England, Scotland and Wales may use them`,
    );
  }
  if (!VISIBLE.test(value)) {
    return issue(field, 'no_visible_character', `${field} needs at least one visible character`);
  }
  return undefined;
}
