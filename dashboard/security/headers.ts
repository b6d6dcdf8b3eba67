/**
 * Headers sent with every dashboard response. The policy allows only the dashboard's own stylesheet
 * and script (no inline script or style at all), no framing, no form posts elsewhere, and no
 * referrer, so sign-in tokens in a URL never leak to another site.
 *
 * @example
 * SECURITY_HEADERS['Referrer-Policy'] // 'no-referrer'
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/** Sets {@link SECURITY_HEADERS} on `headers`, and `Cache-Control: no-store` unless one is set. */
export function applySecurityHeaders(headers: Headers): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) headers.set(name, value);
  // Pages show account data and, once, a raw key: no cache may keep them.
  if (!headers.has('Cache-Control')) headers.set('Cache-Control', 'no-store');
}
