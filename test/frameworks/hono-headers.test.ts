// headersOf learns @hono/node-server's two symbols from the first light Request and then reads them
// directly: every later request must still be read as it is now, whatever path answers.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { describe, expect, it, vi } from 'vitest';
import { headersOf } from '../../frameworks/hono/headers.js';

type Step = (raw: Request) => Request;
const read = (source: unknown): string | null => {
  if (source instanceof Headers) return source.get('x-api-key');
  const value = (source as Record<string, unknown>)['x-api-key'];
  return typeof value === 'string' ? value : null;
};

// Serves one app whose route reports what headersOf read after `step`, and whether it was Node's object.
async function withServer(run: (ask: (step: Step, key?: string) => Promise<unknown>) => Promise<void>) {
  let step: Step = (raw) => raw;
  const app = new Hono();
  app.get('/', (c) => {
    const source = headersOf(step(c.req.raw));
    return c.json({ key: read(source), copied: source instanceof Headers });
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  try {
    await run(async (next, key) => {
      step = next;
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: key ? { 'x-api-key': key } : {} });
      return res.json();
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const untouched: Step = (raw) => raw;

describe('headersOf on @hono/node-server, after learning its symbols', () => {
  it('reads Node’s own header object while the headers were never built, and the request as it is now otherwise', async () => {
    await withServer(async (ask) => {
      // The first light Request teaches the symbols (its headers are built once to learn the second).
      expect(await ask(untouched, 'first')).toEqual({ key: 'first', copied: true });
      // Later ones, untouched: Node's object, no copy, and no scan of the request's symbols.
      const original = Object.getOwnPropertySymbols;
      let scans = 0;
      const spy = vi.spyOn(Object, 'getOwnPropertySymbols').mockImplementation((o) => {
        const symbols = original(o);
        if (symbols.some((s) => s.description === 'incomingKey')) scans++;
        return symbols;
      });
      try {
        expect(await ask(untouched, 'second')).toEqual({ key: 'second', copied: false });
      } finally {
        spy.mockRestore();
      }
      expect(scans).toBe(0);
      // Changed in place: the built headers count.
      const changed: Step = (raw) => {
        raw.headers.set('x-api-key', 'changed');
        return raw;
      };
      expect(await ask(changed, 'sent')).toEqual({ key: 'changed', copied: true });
      const removed: Step = (raw) => {
        raw.headers.delete('x-api-key');
        return raw;
      };
      expect(await ask(removed, 'sent')).toEqual({ key: null, copied: true });
      // Replaced by a plain Request: its own headers.
      const replaced: Step = (raw) => new Request(raw, { headers: { 'x-api-key': 'replaced' } });
      expect(await ask(replaced, 'sent')).toEqual({ key: 'replaced', copied: true });
      // An object that only inherits from a light Request is not one: its own `headers`.
      const inherited: Step = (raw) => {
        const fake = Object.create(raw) as Request;
        Object.defineProperty(fake, 'headers', { value: new Headers({ 'x-api-key': 'inherited' }) });
        return fake;
      };
      expect(await ask(inherited, 'sent')).toEqual({ key: 'inherited', copied: true });
      // And untouched again afterwards: still Node's object.
      expect(await ask(untouched, 'last')).toEqual({ key: 'last', copied: false });
    });
  });

  it('reads a plain Request (app.request) from its headers', async () => {
    const app = new Hono();
    app.get('/', (c) => c.text(read(headersOf(c.req.raw)) ?? 'none'));
    expect(await (await app.request('/', { headers: { 'x-api-key': 'plain' } })).text()).toBe('plain');
  });
});
