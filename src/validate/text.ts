import type { InputIssue } from '#errors';
import { issue } from './issues.js';

// Characters that let a name or an account id disguise itself or forge the lines around it: C0 and C1
// controls and DEL (U+009B is a terminal's CSI), bidirectional embeddings and overrides
// (U+202A-U+202E) and isolates (U+2066-U+2069), line and paragraph separators (U+2028, U+2029), and,
// with the `u` flag, a surrogate that is not half of a pair.
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const DISGUISING = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]/u;

// A character that shows: not white space, not one of Unicode's default-ignorable characters
// (zero-width space and joiners U+200B-U+200D, word joiner U+2060, BOM U+FEFF, variation selectors, ...).
const VISIBLE = /[^\s\p{Default_Ignorable_Code_Point}]/u;

/**
 * Why `value` cannot be a name or an account id (`field`), or `undefined` when it can: a string of
 * 1 to `max` characters once trimmed, with at least one visible character and none of the disguising
 * ones above. Ordinary Unicode (accents, CJK, emoji and their ZWJ sequences such as 👩‍💻) passes.
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
  if (!VISIBLE.test(value)) {
    return issue(field, 'no_visible_character', `${field} needs at least one visible character`);
  }
  return undefined;
}
