// What `keygate doctor` reports: one finding per check, with what is wrong and how to fix it.
import { redactKeys } from 'keygate/store-kit';
import { maskUserinfo } from '../store-url.js';

/** How bad a finding is: `error` (fix it; the command exits 6), `warn` (worth a look), `ok` (checked, fine). */
export type Severity = 'error' | 'warn' | 'ok';

/**
 * One result of `keygate doctor`, as `--json` prints it. `id` names the check (`forwarded_for_spoofable`,
 * `key_no_allow_list`, ...); `fix` is empty for an `ok`; `keyId` is set for a finding about one key.
 *
 * @example
 * const f: Finding = { id: 'no_pepper', severity: 'warn', message: 'no pepper ...', fix: 'set KEYGATE_PEPPER ...' };
 */
export interface Finding {
  readonly id: string;
  readonly severity: Severity;
  readonly message: string;
  readonly fix: string;
  readonly keyId?: string;
}

const scrub = (text: string) => maskUserinfo(redactKeys(text));

const ORDER: Readonly<Record<Severity, number>> = { error: 0, warn: 1, ok: 2 };

/**
 * Findings worst first (errors, then warnings, then ok), keeping the order checks gave within each
 * severity; anything shaped like an API key in a message or a fix is cut to its hint, and a URL's
 * password is masked.
 *
 * @example
 * sortFindings([ok, error])[0] === error // true
 */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f: { ...f, message: scrub(f.message), fix: scrub(f.fix) }, i }))
    .sort((a, b) => ORDER[a.f.severity] - ORDER[b.f.severity] || a.i - b.i)
    .map(({ f }) => f);
}

/**
 * Findings as text, one line each: `error  <id>  <message>`, and for a problem the fix on the next
 * line, indented (`       fix: ...`); then a summary line with the count of each severity.
 *
 * @example
 * formatFindings(findings);
 * // error  forwarded_for_spoofable  a spoofed X-Forwarded-For passed the allow list ...
 * //        fix: set app.set('trust proxy', ...) ...
 * // 1 error, 0 warnings, 2 ok
 */
export function formatFindings(findings: readonly Finding[]): string {
  const lines: string[] = [];
  for (const f of findings) {
    const key = f.keyId ? ` [${f.keyId}]` : '';
    lines.push(`${f.severity.padEnd(5)}  ${f.id}${key}  ${f.message}`);
    if (f.fix) lines.push(`       fix: ${f.fix}`);
  }
  const count = (s: Severity) => findings.filter((f) => f.severity === s).length;
  const errors = count('error');
  const warnings = count('warn');
  lines.push(
    `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}, ${count('ok')} ok`,
  );
  return lines.join('\n');
}
