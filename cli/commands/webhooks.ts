// The `keygate webhooks ...` commands: an account's webhook endpoints and their delivery log, in the
// outbox beside the key store `--store` names. Sending is the service's (`createWebhookDispatcher`).
import { capabilityOf, type KeyManager, UnsupportedError } from 'keygate';
import type { Outbox } from 'keygate/store-kit';
import { type Command, command } from '../command.js';
import { olderThan, prunedOutput } from './prune.js';

const WHERE =
  'Endpoints and deliveries live beside the keys of --store: in the same PostgreSQL schema (the ' +
  'keygate_webhook_* tables), MySQL/MariaDB database (<prefix>webhook_* tables) or SQLite file, or in ' +
  'the same Redis under <prefix>webhooks:. A service running ' +
  "createWebhookDispatcher (keygate/webhooks) sends the account's key events to them, signed.";

const account = { kind: 'string', value: 'A', required: true, help: 'the account the endpoints belong to' } as const;

async function outboxOf(manager: () => Promise<KeyManager>): Promise<Outbox> {
  const outbox = capabilityOf((await manager()).store, 'outbox');
  if (!outbox) throw new UnsupportedError('store', 'this store holds no outbox (no outbox capability)');
  return outbox;
}

const add = command({
  path: ['webhooks', 'add'],
  args: [],
  summary: 'Adds a webhook endpoint to an account and prints its signing secret, this once.',
  details: WHERE,
  flags: {
    account,
    url: {
      kind: 'string',
      value: 'URL',
      required: true,
      help: 'where to POST the events (https:// or http://); a loopback, private or metadata host is refused',
    },
    event: {
      kind: 'strings',
      value: 'TYPE',
      help: 'an event type to send, e.g. key.revoked (repeat; default every type)',
    },
    // The operator's, for a receiver on their own machine; an account never runs this CLI.
    'allow-private-network': {
      kind: 'boolean',
      help: 'development only: accept a loopback or private URL (the dispatcher needs allowPrivateNetworks too)',
    },
  },
  async run({ flags, manager }) {
    const outbox = await outboxOf(manager);
    const { endpoint, secret } = await outbox.endpoints.create(
      {
        accountId: flags.account,
        url: flags.url,
        ...(flags.event.length > 0 && { eventTypes: flags.event }),
      },
      { allowPrivateNetworks: flags['allow-private-network'] },
    );
    return {
      json: { endpoint, secret },
      text: [
        `added ${endpoint.id} -> ${endpoint.url} (${endpoint.eventTypes.join(', ')})`,
        '',
        `signing secret (shown once; verifyWebhook in keygate/webhooks checks with it): ${secret}`,
      ].join('\n'),
    };
  },
});

const list = command({
  path: ['webhooks', 'list'],
  args: [],
  summary: "Lists an account's webhook endpoints (never their secrets).",
  details: WHERE,
  flags: { account },
  async run({ flags, manager }) {
    const endpoints = await (await outboxOf(manager)).endpoints.list(flags.account);
    if (endpoints.length === 0) return { json: endpoints, text: 'no endpoints' };
    const lines = endpoints.map(
      (e) =>
        `${e.id}  ${e.enabled ? 'enabled ' : 'disabled'}  ${e.url}  ${e.eventTypes.join(',')}${e.disabledAt ? `  (disabled ${e.disabledAt})` : ''}`,
    );
    return { json: endpoints, text: lines.join('\n') };
  },
});

const remove = command({
  path: ['webhooks', 'remove'],
  args: ['id'],
  summary: 'Removes a webhook endpoint; its deliveries still pending end as failed.',
  details: WHERE,
  flags: { account },
  async run({ args, flags, manager }) {
    const removed = await (await outboxOf(manager)).endpoints.remove(flags.account, args.id);
    return {
      json: { id: args.id, removed },
      text: removed ? `removed ${args.id}` : `no endpoint ${args.id} in account ${flags.account}`,
      ...(removed ? {} : { exitCode: 2 }),
    };
  },
});

const deliveries = command({
  path: ['webhooks', 'deliveries'],
  args: [],
  summary: "Prints an account's webhook delivery log, newest first: status, attempts, last answer, next attempt.",
  details: WHERE,
  flags: {
    account,
    endpoint: { kind: 'string', value: 'ID', help: "only this endpoint's deliveries" },
  },
  async run({ flags, manager }) {
    const log = await (await outboxOf(manager)).deliveries({
      accountId: flags.account,
      ...(flags.endpoint !== undefined && { endpointId: flags.endpoint }),
    });
    if (log.length === 0) return { json: log, text: 'no deliveries' };
    const lines = log.map((d) => {
      const last = d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? '-');
      const next = d.nextAttemptAt ? `  next ${d.nextAttemptAt}` : '';
      return `${d.createdAt}  ${d.eventType}  ${d.endpointId}  ${d.status}  attempts ${d.attempts}  ${last}${next}`;
    });
    return { json: log, text: lines.join('\n') };
  },
});

const prune = command({
  path: ['webhooks', 'prune'],
  args: [],
  summary:
    'Deletes the events, of every account, that ended longer ago than --older-than, with their deliveries; never one still pending.',
  details:
    'A started dispatcher does this once an hour by itself (its retainMs, 7 days by default); this is for ' +
    'an outbox no dispatcher prunes (retainMs: false), or a shorter retention now. ' +
    WHERE,
  flags: { 'older-than': olderThan('7d') },
  async run({ flags, manager }) {
    const olderThanMs = flags['older-than'];
    const pruned = await (await outboxOf(manager)).prune({ olderThanMs });
    return prunedOutput(pruned, olderThanMs, 'events and deliveries');
  },
});

/** `keygate webhooks add|list|remove|deliveries|prune`. */
export const WEBHOOKS_COMMANDS: readonly Command[] = [add, list, remove, deliveries, prune];
