import type { AttemptThrottle, CreditLedger, KeyManager } from 'keygate';
import type { DashboardStore } from 'keygate/store-kit';
import type { Signer } from './security/crypto.js';
import type { Session, SessionTimes } from './security/session.js';

/** One line of the account panel: a label and its value, both shown as text (escaped). */
export interface AccountPanelEntry {
  readonly label: string;
  readonly value: string | number;
}

/** The dashboard's settled options, shared by every route. */
export interface Dash {
  readonly manager: KeyManager;
  readonly basePath: string;
  readonly signer: Signer;
  /** The dashboard's own store: pages of the key list, usage of many keys, used tokens. */
  readonly store: DashboardStore;
  readonly times: SessionTimes;
  /** The permission catalogue, or undefined for a free text field. */
  readonly catalogue: readonly string[] | undefined;
  readonly rateLimits: boolean;
  readonly accountPanel:
    | ((accountId: string, request: Request) => readonly AccountPanelEntry[] | Promise<readonly AccountPanelEntry[]>)
    | undefined;
  /** The ledger the account page reads its "Credits" section from (never written to), or undefined for none. */
  readonly credits: CreditLedger | undefined;
  readonly resolveAccount:
    | ((request: Request) => string | null | undefined | Promise<string | null | undefined>)
    | undefined;
  readonly clientIp: (request: Request, rest: unknown[]) => Promise<string | undefined>;
  readonly throttle: AttemptThrottle;
  readonly clock: () => number;
  readonly onError: (err: unknown) => void;
  /** Where a page of the dashboard lives: `path('/keys')` is `'<basePath>/keys'`. */
  path(inner: string): string;
}

/** What the routes of a signed-in request know (Hono context variables). */
export interface DashEnv {
  Variables: {
    account: string;
    /** The CSRF token for this session's forms. */
    csrf: string;
    /** The link session, or null when the host's login (`resolveAccount`) named the account. */
    session: Session | null;
    /** The posted form, read once by the CSRF check. */
    form: URLSearchParams;
  };
  Bindings: { rest?: unknown[] };
}
