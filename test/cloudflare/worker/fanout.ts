// A Worker that sends `n` incoming requests at once to each Worker bound as LEASED_A, LEASED_B and
// LEASED_C (POST /one each), as traffic from many clients reaches those isolates, and answers every
// request's report. Workers call Workers directly; nothing crosses Miniflare's proxy from Node.
interface Fetcher {
  fetch(url: string, init?: RequestInit): Promise<Response>;
}

export default {
  async fetch(request: Request, env: Record<string, Fetcher>): Promise<Response> {
    const { n } = (await request.json()) as { n: number };
    const targets = [env.LEASED_A, env.LEASED_B, env.LEASED_C] as Fetcher[];
    const answers = await Promise.all(
      targets.flatMap((target) =>
        Array.from({ length: n }, async () => {
          const res = await target.fetch('https://leased.test/one', { method: 'POST', body: '{}' });
          if (res.status !== 200) throw new Error(`/one answered ${res.status}: ${await res.text()}`);
          return res.json();
        }),
      ),
    );
    return Response.json(answers);
  },
};
