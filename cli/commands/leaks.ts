// `keygate leaks drill`: a report signed the way GitHub's secret scanning signs one, replayed against a
// running service. The drill makes its own P-256 key pair and serves the matching public keys JSON on a
// local port; the service trusts it when started with KEYGATE_LEAKS_PUBLIC_KEYS_URL pointing there.
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKey, InvalidInputError } from 'keygate';
import { command } from '../command.js';

/** The port the drill serves its public keys on unless told otherwise. */
export const DRILL_KEYS_PORT = 7357;

/** Where the drill says it found the token. */
const DRILL_URL = 'https://github.com/keygate/leaks-drill/blob/main/.env';

interface KeyServer {
  readonly url: string;
  fetches(): number;
  close(): Promise<void>;
}

function serveKeys(json: string, port: number): Promise<KeyServer> {
  let fetches = 0;
  const server = createServer((_req, res) => {
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(json);
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new InvalidInputError('--keys-port', `port ${port} is in use: pass --keys-port with a free port`)
          : err,
      ),
    );
    server.listen(port, '127.0.0.1', () => {
      const { port: actual } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${actual}/`,
        fetches: () => fetches,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

function targetOf(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch {}
  throw new InvalidInputError('--url', "--url must be the http(s) URL of the service's secret scanning endpoint");
}

function portOf(value: string | undefined): number {
  if (value === undefined) return DRILL_KEYS_PORT;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidInputError('--keys-port', '--keys-port must be a port number, 0-65535');
  }
  return port;
}

// The answer as printed: a `token_raw` echoed back is shown as present, never as the token.
function shown(answer: unknown): unknown {
  if (!Array.isArray(answer)) return answer;
  return answer.map((entry) =>
    entry && typeof entry === 'object' && 'token_raw' in entry ? { ...entry, token_raw: '[the token]' } : entry,
  );
}

/** `keygate leaks drill --url URL [--token T] [--keys-port N]`. */
export const LEAKS_DRILL_COMMAND = command({
  path: ['leaks', 'drill'],
  args: [],
  summary:
    "Replays a report signed like GitHub's secret scanning against a running service, serving the matching " +
    'public keys itself.',
  details:
    'Start the service with KEYGATE_LEAKS_PUBLIC_KEYS_URL=http://127.0.0.1:7357/ (the --keys-port) so that it\n' +
    "trusts the drill's keys. With --token a live key of the service, the answer is true_positive and the\n" +
    'key is suspended; without, a well-formed key nobody has is reported: false_positive. The service\n' +
    'fetches keys for a new key id at most once a minute: wait a minute between drills. Exits 1 unless\n' +
    'the service answered 200.',
  flags: {
    url: {
      kind: 'string',
      value: 'URL',
      required: true,
      help: 'the endpoint, e.g. http://127.0.0.1:3000/github/secret-scanning',
    },
    token: {
      kind: 'string',
      value: 'KEY',
      help:
        'the token to report (default: a new well-formed live key that no one has); a command line is seen ' +
        'by ps and kept in shell history: report a throwaway key',
    },
    type: { kind: 'string', value: 'NAME', help: 'the token type GitHub would name (default keygate_api_key)' },
    'keys-port': {
      kind: 'string',
      value: 'PORT',
      help: `where the public keys are served (default ${DRILL_KEYS_PORT})`,
    },
  },
  async run({ flags }) {
    const target = targetOf(flags.url);
    const port = portOf(flags['keys-port']);
    const token = flags.token ?? generateKey({ mode: 'live' });
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keyId = `keygate-drill-${randomBytes(8).toString('hex')}`;
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const keys = await serveKeys(
      JSON.stringify({ public_keys: [{ key_identifier: keyId, key: pem, is_current: true }] }),
      port,
    );
    try {
      const body = JSON.stringify([
        { token, type: flags.type ?? 'keygate_api_key', url: DRILL_URL, source: 'content' },
      ]);
      const signature = sign('sha256', Buffer.from(body), { key: privateKey, dsaEncoding: 'der' }).toString('base64');
      const response = await fetch(target, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'github-public-key-identifier': keyId,
          'github-public-key-signature': signature,
        },
        body,
      });
      const text = await response.text();
      let answer: unknown = text;
      try {
        answer = JSON.parse(text);
      } catch {}
      const result = { status: response.status, keysUrl: keys.url, keysFetched: keys.fetches(), answer: shown(answer) };
      const lines = [
        `POST ${target}: ${response.status}`,
        `public keys served on ${keys.url} (fetched ${keys.fetches()} time${keys.fetches() === 1 ? '' : 's'})`,
        `answer: ${JSON.stringify(result.answer)}`,
      ];
      if (response.status === 401) {
        lines.push(
          keys.fetches() === 0
            ? `The service did not fetch the drill's keys: start it with KEYGATE_LEAKS_PUBLIC_KEYS_URL=${keys.url}, ` +
                'or wait a minute after the last drill.'
            : 'The service fetched the keys but refused the signature.',
        );
      }
      return { json: result, text: lines.join('\n'), exitCode: response.status === 200 ? 0 : 1 };
    } finally {
      await keys.close();
    }
  },
});
