import { APPEND_EVENTS_FUNCTION } from './outbox-scripts.js';
import { APPEND_AUDIT_FUNCTION } from './scripts.js';

/**
 * A key write and what records it, in one script (so atomically): `body` (the write, returning 'ok'
 * when it wrote), with its own keys and arguments first; then, only when it wrote, the audit entries
 * (`append_audit`, when `audit`) and the outbox events (`append_events`, when `events`), each with
 * its keys and arguments after the ones before it. The text depends only on these four values, so a
 * server caches at most four scripts per write.
 *
 * @example
 * const script = withRecords(UPDATE, 1, 4, { audit: true, events: true });
 */
export function withRecords(
  body: string,
  keyCount: number,
  argCount: number,
  parts: { audit: boolean; events: boolean },
): string {
  if (!parts.audit && !parts.events) return body;
  return `${parts.audit ? APPEND_AUDIT_FUNCTION : ''}${parts.events ? APPEND_EVENTS_FUNCTION : ''}
local result = (function()
${body}
end)()
if result == 'ok' then
  local k, a = ${keyCount + 1}, ${argCount + 1}
${parts.audit ? '  k, a = append_audit(k, a)\n' : ''}${parts.events ? '  append_events(k, a)\n' : ''}end
return result`;
}
