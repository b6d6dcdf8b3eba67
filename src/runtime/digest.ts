/**
 * The one platform-specific need of the core: SHA-256 and HMAC-SHA-256 of a short string, as lower-case hex.
 * `#digest` resolves to `web-digest` (Web Crypto: Workers, Deno, Bun, browsers) or, under the `node`
 * condition, to Node's one-shot `crypto.hash`, which answers synchronously and several times faster.
 */
export interface DigestRuntime {
  sha256Hex(data: string): string | Promise<string>;
  hmacSha256Hex(secret: string, data: string): string | Promise<string>;
}
