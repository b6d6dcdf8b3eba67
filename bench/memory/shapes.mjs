// The records the memory benchmark caches, as JSON (what a backend reads), by shape:
//   keymanager  the record KeyManager writes with no options (the scale benchmark's): one permission,
//               no allow list, no metadata, no rate limit of its own
//   realistic   what a production key tends to carry: a name, two or three permissions, an allow
//               list of a few entries (its account's offices), metadata, a rate limit; 1,000 accounts,
//               whose keys share their account's allow list, and a few plans

const OFFICES = ['203.0.113.0/24', '198.51.100.7', '2001:db8::/32', '192.0.2.0/28', '2001:db8:ffff::/48'];
const PERMISSIONS = [['email:verify'], ['email:verify', 'email:send'], ['email:verify', 'email:send', 'lists:read']];
const PLANS = [
  { plan: 'free', tier: 'self-serve' },
  { plan: 'pro', tier: 'self-serve' },
  { plan: 'business', tier: 'sales' },
];
const LIMITS = [
  { limit: 100, windowMs: 60_000 },
  { limit: 1_000, windowMs: 60_000 },
];

/** The JSON record of key `i` in `shape`, with its digest and hint. */
export function recordJson(shape, i, hash, hint) {
  const created = new Date(Date.UTC(2026, 0, 1) + i * 61_000).toISOString();
  const base = {
    id: `key_${(i * 7919).toString(36).padStart(22, '0')}`,
    hash,
    accountId: `acct_${(i % 1000).toString(36).padStart(10, '0')}`,
    name: `working ${i}`,
    mode: 'live',
    status: 'active',
    permissions: ['email:verify'],
    allowedIps: [],
    hint,
    createdAt: created,
    updatedAt: created,
    expiresAt: null,
    revokedAt: null,
    rotatedFrom: null,
    rotatedTo: null,
    metadata: {},
    version: 1,
  };
  if (shape === 'keymanager') return JSON.stringify(base);
  const account = i % 1000;
  return JSON.stringify({
    ...base,
    name: `production server ${i} (eu-west)`,
    permissions: PERMISSIONS[i % PERMISSIONS.length],
    allowedIps: [OFFICES[0], ...OFFICES.slice(1 + (account % 3), 3 + (account % 3))],
    updatedAt: new Date(Date.parse(created) + 3_600_000).toISOString(),
    suspendedAt: null,
    suspendedReason: null,
    metadata: { ...PLANS[account % PLANS.length], owner: `team-${account}` },
    rateLimit: LIMITS[account % LIMITS.length],
    version: 3,
  });
}
