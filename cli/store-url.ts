// How the CLI shows a store URL: with its password masked. A store URL is a credential as often as
// not (`mysql://app:secret@db/app`), and the CLI's messages end up in terminals, CI logs and bug
// reports; every message that names a store goes through these two functions.

// A query parameter whose value is a credential (`?password=…` is read by pg and mysql2 alike).
const SECRET_PARAMETER = /pass|secret|token|key|credential/i;

/**
 * A store URL fit to print: the password of its userinfo and the value of any query parameter named
 * like a credential (`password`, `sslkey`, ...) replaced by `***`; the user name, host, path and other
 * parameters kept. A URL that does not parse is not echoed: only its scheme, if it has one.
 *
 * @example
 * describeStoreUrl('mysql://app:secret@db:3306/app') // 'mysql://app:***@db:3306/app'
 * describeStoreUrl('redis://:pw@cache')              // 'redis://:***@cache'
 * describeStoreUrl('pglite:./.keygate')              // 'pglite:./.keygate'
 * describeStoreUrl('postgres://u:p@[bad')            // 'a postgres: URL that does not parse'
 */
export function describeStoreUrl(url: string): string {
  const scheme = schemeOf(url);
  // Only a `scheme://` URL carries userinfo; `pglite:./dir` and `sqlite:file.db` are paths.
  if (scheme === undefined || !url.toLowerCase().startsWith(`${scheme}//`)) {
    // A path has no userinfo; anything else with an `@` might (`mysql:/u:pw@db`): only the scheme.
    if (!url.includes('@')) return url;
    return scheme === undefined ? 'a store URL that does not parse' : `a ${scheme} URL that does not parse`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `a ${scheme} URL that does not parse`;
  }
  if (parsed.password !== '') parsed.password = '***';
  for (const [name] of parsed.searchParams) {
    if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, '***');
  }
  // `new URL` escapes the mask's asterisks in the userinfo; put them back as typed.
  return parsed.toString().replace('%2A%2A%2A', '***');
}

/**
 * `url`'s scheme with its colon (`mysql:`), lower-cased, or undefined when it has none.
 *
 * @example
 * schemeOf('MySQL://db/app') // 'mysql:'
 * schemeOf('./dir')          // undefined
 */
export function schemeOf(url: string): string | undefined {
  return /^([a-z][a-z0-9+.-]*:)/i.exec(url)?.[1]?.toLowerCase();
}

/**
 * `text` with the password of every `scheme://user:password@` in it masked: for messages that may
 * quote a URL the CLI did not format itself (a driver's error).
 *
 * @example
 * maskUserinfo('connect to postgres://u:hunter2@db failed') // 'connect to postgres://u:***@db failed'
 */
export function maskUserinfo(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@'"]*):[^\s/?#'"]*@/gi, '$1:***@');
}
