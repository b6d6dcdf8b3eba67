// The body GitHub posts: `[{ token, type, url, source }]`. Read with a size cap, parsed only after its
// signature checked out.

/**
 * One match GitHub reports. `token` is the leaked value itself: never log it.
 *
 * @example
 * const report: ReportedToken = { token: 'mk_live_…', type: 'keygate_api_key', url: 'https://github.com/…', source: 'content' };
 */
export interface ReportedToken {
  readonly token: string;
  /** The secret type the partner registered with GitHub (echoed as `token_type` in the answer). */
  readonly type: string;
  /** Where GitHub found it. */
  readonly url: string;
  /** What kind of place (`content`, `commit`, `pull_request_description`, `gist`, ...), or `unknown`. */
  readonly source: string;
}

/** Longest `type`, `url` and `source` kept; longer ones are cut (they are GitHub's, and only shown). */
const MAX_TEXT = 2_048;

const text = (value: unknown, fallback: string): string | null =>
  value === undefined || value === null ? fallback : typeof value === 'string' ? value.slice(0, MAX_TEXT) : null;

/**
 * The reports in a verified body, or a reason it is not GitHub's shape: not JSON, not an array, an
 * entry that is not an object with a string `token` (`type`, `url` and `source`, when present, strings).
 */
export function parseReports(body: Uint8Array): ReportedToken[] | { readonly problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return { problem: 'the body is not JSON' };
  }
  if (!Array.isArray(json)) return { problem: 'the body must be a JSON array of reported tokens' };
  const out: ReportedToken[] = [];
  for (const [index, entry] of json.entries()) {
    const item = entry as Record<string, unknown> | null;
    if (item === null || typeof item !== 'object' || Array.isArray(item) || typeof item.token !== 'string') {
      return { problem: `entry ${index} must be an object with a string "token"` };
    }
    const type = text(item.type, '');
    const url = text(item.url, '');
    const source = text(item.source, 'unknown');
    if (type === null || url === null || source === null) {
      return { problem: `entry ${index}: "type", "url" and "source" must be strings` };
    }
    out.push({ token: item.token, type, url, source });
  }
  return out;
}
