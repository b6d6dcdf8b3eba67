// GET /metrics on the example service: Prometheus text, fed by keygate's OpenTelemetry instruments.
import { describe, expect, it } from 'vitest';
import { startMain } from './service.js';

describe('the example service exposes /metrics for Prometheus', () => {
  it('counts allowed and denied requests by code and mode, in the Prometheus text format', async () => {
    const { url, close, secrets } = await startMain(['--memory']);
    try {
      const [testKey] = secrets.filter((line) => line.startsWith('mk_test_'));
      const verify = (key?: string) =>
        fetch(`${url}/v1/email/verify`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
          body: JSON.stringify({ email: 'ada@example.com' }),
        });
      expect((await verify(testKey)).status).toBe(200);
      expect((await verify(testKey)).status).toBe(200);
      expect((await verify()).status).toBe(401);

      const res = await fetch(`${url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await res.text();
      expect(text).toMatch(/^# TYPE keygate_auth_requests_total counter$/m);
      const sample = (labels: string) =>
        Number(text.match(new RegExp(`^keygate_auth_requests_total\\{${labels}[^}]*\\} (\\d+)`, 'm'))?.[1]);
      expect(sample('keygate_auth_outcome="allowed",keygate_auth_code="ok",keygate_key_mode="test"')).toBe(2);
      expect(sample('keygate_auth_outcome="denied",keygate_auth_code="missing_api_key"')).toBe(1);
      expect(text).toMatch(/^keygate_auth_duration_count\{keygate_auth_outcome="allowed"[^}]*\} 2$/m);
      // A billed route checks its key before reading the body and again with the cost: the first request's
      // first check misses the cache, its second check and both of the next request's hit it.
      expect(text).toMatch(/^keygate_cache_lookups_total\{keygate_cache_result="hit"[^}]*\} 3$/m);
      expect(text).toMatch(/^keygate_cache_lookups_total\{keygate_cache_result="miss"[^}]*\} 1$/m);
      // Buckets sized for seconds of authentication, not the SDK's default 0..10000.
      expect(text).toMatch(/^keygate_auth_duration_bucket\{[^}]*le="0\.001"\} \d+$/m);
      expect(text).not.toContain(testKey);
    } finally {
      await close();
    }
  });
});
