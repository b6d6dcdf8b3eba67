import { type KeygateEvent, KeyManager, MemoryKeyStore, type WritableKeyStore } from 'keygate';
import { type Dashboard, type DashboardOptions, dashboard } from 'keygate/dashboard';
import { CAPABILITIES, type Capable } from 'keygate/store-kit';

/** A secret of the minimum length (32 bytes). */
export const SECRET = 'test-secret-of-at-least-32-bytes!';
export const ORIGIN = 'http://dash.test';
export const BASE = '/dashboard';

/** A controllable clock, starting now. */
export function fakeClock(start = Date.now()) {
  let now = start;
  const clock = () => now;
  clock.advance = (ms: number) => {
    now += ms;
  };
  return clock;
}

export interface Setup {
  ui: Dashboard;
  keys: KeyManager;
  store: MemoryKeyStore;
  events: KeygateEvent[];
  clock: ReturnType<typeof fakeClock>;
}

/**
 * A dashboard at `/dashboard` over a fresh MemoryKeyStore (or `keyStore`), with events recorded. The
 * dashboard's `store` is its default (a MemoryDashboardStore over the key store) unless given.
 */
export function setup(options: Partial<DashboardOptions> & { keyStore?: WritableKeyStore } = {}): Setup {
  const { keyStore, ...dashboardOptions } = options;
  const clock = fakeClock();
  const store = (keyStore as MemoryKeyStore | undefined) ?? new MemoryKeyStore();
  const events: KeygateEvent[] = [];
  const keys = options.manager ?? new KeyManager({ store, clock, onEvent: (e) => void events.push(e) });
  const ui = dashboard({
    secret: SECRET,
    basePath: BASE,
    clock,
    permissions: ['email:verify', 'email:find'],
    ...dashboardOptions,
    manager: keys,
  });
  return { ui, keys, store, events, clock };
}

/** A browser-like client: keeps cookies, sends same-origin headers on POST. */
export class Client {
  readonly cookies = new Map<string, string>();

  constructor(
    private readonly ui: Dashboard,
    private readonly origin = ORIGIN,
  ) {}

  async request(
    path: string,
    init: RequestInit & { form?: Record<string, string | string[]> } = {},
  ): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0 && !headers.has('cookie')) {
      headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    }
    let body = init.body;
    if (init.form) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(init.form))
        for (const item of Array.isArray(v) ? v : [v]) params.append(k, item);
      body = params;
      headers.set('content-type', 'application/x-www-form-urlencoded');
    }
    const response = await this.ui.fetch(new Request(new URL(path, this.origin), { ...init, headers, body }));
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const [name, value] = (pair ?? '').split('=') as [string, string];
      const expired = attrs.some((a) => /max-age=0/i.test(a.trim())) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  get(path: string, headers?: HeadersInit) {
    return this.request(path, { headers });
  }

  /**
   * POSTs a form the way the dashboard's own page would: same origin, its CSRF token, and for a
   * form that makes a key the one-time token of a fresh render of the page that shows it (the
   * create form for `/keys`, the key page for `/keys/:id/rotate`), unless `form` brings its own.
   */
  async post(path: string, form: Record<string, string | string[]>, headers: HeadersInit = {}) {
    const shownOn = formPageOf(path);
    const page = shownOn && form._once === undefined ? await (await this.get(shownOn)).text() : '';
    const once = onceOf(page);
    const csrf = form._csrf ?? (page.includes('name="_csrf"') ? csrfOf(page) : await this.csrf());
    return this.request(path, {
      method: 'POST',
      form: { _csrf: csrf, ...(once ? { _once: once } : {}), ...form },
      headers: { origin: this.origin, 'sec-fetch-site': 'same-origin', ...headers },
    });
  }

  /** The CSRF token of this session's forms, read from the create form. */
  async csrf(): Promise<string> {
    return csrfOf(await (await this.get(`${BASE}/keys/new`)).text());
  }

  /** Signs in to `accountId` with a fresh one-time link. */
  async signIn(accountId = 'acct_1'): Promise<this> {
    const link = await this.ui.signInLink({ accountId, baseUrl: this.origin });
    const response = await this.get(link);
    if (response.status !== 303) throw new Error(`sign-in failed: ${response.status}`);
    return this;
  }
}

/** The page that shows the form posted to `path` when that form makes a key, else null. */
function formPageOf(path: string): string | null {
  const url = new URL(path, ORIGIN).pathname;
  if (url.endsWith('/keys')) return `${url}/new`;
  return /\/keys\/[^/]+\/rotate$/.test(url) ? url.slice(0, -'/rotate'.length) : null;
}

/** The one-time token of the create or rotate form on a page, or undefined when it has none. */
export function onceOf(html: string): string | undefined {
  return /name="_once" value="([^"]+)"/.exec(html)?.[1];
}

/** The CSRF token in a page's forms. */
export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF token on the page');
  return match[1] as string;
}

/**
 * A key store that keeps no usage statistics, over the records of `memory` (so that a
 * `MemoryDashboardStore(memory)` lists the same keys): what a custom backend without usage looks like.
 */
export function keyStoreWithoutUsage(memory: MemoryKeyStore): WritableKeyStore & Capable {
  return {
    [CAPABILITIES]: { changes: memory },
    findByHash: (hash) => memory.findByHash(hash),
    findById: (id) => memory.findById(id),
    listByAccount: (accountId) => memory.listByAccount(accountId),
    insert: (record) => memory.insert(record),
    update: (id, patch, condition) => memory.update(id, patch, condition),
  };
}
