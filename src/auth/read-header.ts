import type { HeaderSource } from '../vocabulary/result.js';

/** Marks a header that is present but cannot hold one key (several values, not text). */
export const SEVERAL_VALUES = null;

function isWhitespace(c: number): boolean {
  return c === 32 || c === 9;
}

function trimOws(value: string): string {
  const last = value.length - 1;
  if (last < 0 || (!isWhitespace(value.charCodeAt(0)) && !isWhitespace(value.charCodeAt(last)))) return value;
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}

/**
 * The value of header `name` (already lower-case), with HTTP's optional whitespace trimmed:
 * `undefined` when absent or empty, `null` when it holds several values or no text.
 * Field names match case-insensitively, also in plain records that were not built by Node.
 *
 * @example
 * readHeader({ 'X-API-Key': ' mk_test_... ' }, 'x-api-key') // 'mk_test_...'
 */
export function readHeader(headers: HeaderSource | null | undefined, name: string): string | undefined | null {
  if (headers == null) return undefined;
  let value: unknown;
  if (typeof (headers as { get?: unknown }).get === 'function') {
    value = (headers as { get(name: string): string | null }).get(name);
  } else {
    const record = headers as Readonly<Record<string, unknown>>;
    value = record[name];
    if (value === undefined) {
      for (const field in record) {
        if (field.length === name.length && field.toLowerCase() === name) {
          value = record[field];
          break;
        }
      }
    }
  }
  if (value == null) return undefined;
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    if (value.length > 1) return SEVERAL_VALUES;
    value = value[0];
  }
  if (typeof value !== 'string') return SEVERAL_VALUES;
  const trimmed = trimOws(value);
  return trimmed === '' ? undefined : trimmed;
}
