import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import type { WebhookDelivery, WebhookEndpoint } from 'keygate';
import { capabilityOf } from 'keygate';
import type { Dash, DashEnv } from '../context.js';
import { time } from '../views/format.js';
import { render } from './render.js';

/** Deliveries on the webhooks page: the newest. */
export const WEBHOOK_DELIVERIES_SHOWN = 50;

/** Whether the manager's store holds an outbox, so that the webhooks page has something to show. */
export function hasWebhooks(dash: Dash): boolean {
  return capabilityOf(dash.manager.store, 'outbox') !== undefined;
}

function endpointTable(endpoints: readonly WebhookEndpoint[]) {
  if (endpoints.length === 0)
    return html`<p class="empty">No webhook endpoints. Add one with <code>keygate webhooks add</code>.</p>`;
  const rows = endpoints.map(
    (e) => html`<tr>
      <td><code>${e.url}</code></td>
      <td>${e.eventTypes.join(', ')}</td>
      <td>${e.enabled ? 'enabled' : html`disabled ${e.disabledAt ? time(e.disabledAt, true) : ''}`}</td>
      <td>${time(e.createdAt, true)}</td>
    </tr>`,
  );
  return html`<div class="table-wrap"><table class="table compact">
    <caption>Webhook endpoints</caption>
    <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Added</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
}

function deliveryTable(deliveries: readonly WebhookDelivery[], urls: ReadonlyMap<string, string>) {
  if (deliveries.length === 0) return html`<p class="empty">No deliveries yet.</p>`;
  const rows = deliveries.map(
    (d) => html`<tr>
      <td>${time(d.createdAt, true)}</td>
      <td><code>${d.eventType}</code></td>
      <td><code>${urls.get(d.endpointId) ?? d.endpointId}</code></td>
      <td>${d.status}</td>
      <td class="num">${d.attempts}</td>
      <td>${d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? html`<span class="muted">none</span>`)}</td>
      <td>${d.nextAttemptAt ? time(d.nextAttemptAt, true) : html`<span class="muted">none</span>`}</td>
    </tr>`,
  );
  return html`<div class="table-wrap"><table class="table compact">
    <caption>Webhook deliveries</caption>
    <thead><tr><th scope="col">Event at</th><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Last answer</th><th scope="col">Next attempt</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
}

async function webhooksRoute(c: Context<DashEnv>, dash: Dash) {
  const account = c.get('account');
  const outbox = capabilityOf(dash.manager.store, 'outbox');
  const body = outbox
    ? await (async () => {
        const [endpoints, deliveries] = await Promise.all([
          outbox.endpoints.list(account),
          outbox.deliveries({ accountId: account, limit: WEBHOOK_DELIVERIES_SHOWN }),
        ]);
        const urls = new Map(endpoints.map((e) => [e.id, e.url]));
        return html`${endpointTable(endpoints)}${deliveryTable(deliveries, urls)}`;
      })()
    : html`<p class="muted">This key store keeps no outbox, so it sends no webhooks.</p>`;
  return render(c, dash, {
    title: 'Webhooks',
    body: html`<p class="crumbs"><a href="${dash.path('/')}">API keys</a></p>
    <h1>Webhooks</h1>
    <p class="muted">Where this account's key events are sent, and the delivery log, newest first.</p>
    ${body}`,
  });
}

/** `GET /webhooks`: the account's webhook endpoints (never their secrets) and its delivery log, read only. */
export function registerWebhooks(app: Hono<DashEnv>, dash: Dash): void {
  app.get('/webhooks', (c) => webhooksRoute(c, dash));
}
