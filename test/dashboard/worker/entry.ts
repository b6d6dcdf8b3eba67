// The dashboard as a Cloudflare Worker, mounted the documented way: `export default { fetch: ui.fetch }`.
import { KeyManager, MemoryKeyStore } from 'keygate';
import { dashboard } from 'keygate/dashboard';

const keys = new KeyManager({ store: new MemoryKeyStore() });
const ui = dashboard({ manager: keys, secret: 'worker-secret-of-at-least-32-bytes', permissions: ['email:verify'] });

export default { fetch: ui.fetch };
