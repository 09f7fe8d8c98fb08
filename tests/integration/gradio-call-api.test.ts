/**
 * Issue 13, generic Gradio parts, with the real clients: curl running the commands of Gradio's
 * "Use via API" page against `/gradio_api/call/...`, and @gradio/client 2.7.0 with `auth:`
 * (cookie from `/login`) and with `token:` (log and progress messages, cancel).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointDefinition } from '../../server/gradio/index.ts';
import { sleep, startGradioServer, type GradioTestServer } from './gradio-server.ts';

const run = promisify(execFile);
/** Runs a shell line as Gradio's docs write it (`| read EVENT_ID` needs lastpipe in bash). */
const sh = async (line: string) => (await run('bash', ['-O', 'lastpipe', '-c', line], { timeout: 20_000 })).stdout;

const json = { label: 'Response', component: 'json' };
const aborted: string[] = [];
const endpoints: EndpointDefinition<{ user: string }>[] = [
  {
    apiName: 'echo',
    inputs: [
      { name: 'message', label: 'Message', component: 'textbox' },
      { name: 'suffix', label: 'Suffix', component: 'textbox', default: '!' },
    ],
    outputs: [json],
    async *handler({ data, identity, log, progress }) {
      log('info', 'started');
      progress([{ index: 1, length: 3, unit: 'steps', desc: 'thinking' }]);
      let text = '';
      for (const ch of `${data[0]}${data[1]}`) {
        text += ch;
        yield [{ text, user: identity.user }];
      }
      log('warning', 'almost done', { title: 'Careful' });
    },
  },
  {
    apiName: 'fail',
    inputs: [],
    outputs: [json],
    async *handler() {
      yield ['partial'];
      throw new Error('kaboom');
    },
  },
  {
    apiName: 'slow',
    inputs: [],
    outputs: [json],
    async *handler({ signal, eventId }) {
      try {
        while (!signal.aborted) {
          yield ['tick'];
          await sleep(20);
        }
      } finally {
        if (signal.aborted) aborted.push(eventId);
      }
    },
  },
  { apiName: 'hidden', showApi: false, inputs: [], outputs: [json], handler: () => ['secret-ish'] },
];

const tokens: Record<string, string> = { 'tok-alice': 'alice', 'tok-bob': 'bob' };
const revoked = new Set<string>();
let server: GradioTestServer;

beforeAll(async () => {
  server = await startGradioServer(endpoints, {
    authenticate: async (headers) => {
      const token = /^Bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1];
      return token && tokens[token] && !revoked.has(token) ? { user: tokens[token] } : null;
    },
    identityKey: (identity: { user: string }) => identity.user,
    login: async (username, password) => (username === 'alice' && password === 'wonderland' ? 'tok-alice' : null),
    logout: async (token) => void revoked.add(token),
  });
});
afterAll(async () => {
  await server?.close();
});

/** Parses `event: x\ndata: y` blocks. */
function namedEvents(raw: string): { event: string; data: unknown }[] {
  return raw
    .split('\n\n')
    .filter((b) => b.startsWith('event: '))
    .map((b) => {
      const [eventLine, dataLine] = b.split('\n');
      return { event: eventLine.slice(7), data: JSON.parse(dataLine.slice(6)) };
    });
}

describe('curl call API (Gradio docs commands)', () => {
  it('POST /call/echo then GET streams generating events with full values and a complete event', async () => {
    const out = await sh(
      `curl -X POST ${server.url}/gradio_api/call/echo -s -H "Content-Type: application/json" -H "Authorization: Bearer tok-alice" -d '{"data": ["Hi"]}' ` +
        `| awk -F'"' '{ print $4}' | read EVENT_ID; curl -N -s -H "Authorization: Bearer tok-alice" ${server.url}/gradio_api/call/echo/$EVENT_ID`,
    );
    const events = namedEvents(out);
    expect(events.map((e) => e.event)).toEqual(['generating', 'generating', 'generating', 'complete']);
    expect(events[1].data).toEqual([{ text: 'Hi', user: 'alice' }]); // rebuilt from a diff, not the diff
    expect(events[3].data).toEqual([{ text: 'Hi!', user: 'alice' }]);
    expect(out).not.toContain('"msg"'); // no session-protocol frames (log, progress, estimation) leak
  });

  it('/call/v2 takes parameters by name; unknown names are a 422 in {detail}', async () => {
    const out = await sh(
      `EVENT_ID=$(curl -s -X POST ${server.url}/gradio_api/call/v2/echo -H "Content-Type: application/json" -H "Authorization: Bearer tok-alice" -d '{"message": "kw", "suffix": "?"}' | awk -F'"' '{ print $4}'); ` +
        `curl -N -s -H "Authorization: Bearer tok-alice" ${server.url}/gradio_api/call/v2/echo/$EVENT_ID`,
    );
    expect(namedEvents(out).at(-1)).toEqual({ event: 'complete', data: [{ text: 'kw?', user: 'alice' }] });
    const bad = await sh(`curl -s -w ' %{http_code}' -X POST ${server.url}/gradio_api/call/v2/echo -H "Content-Type: application/json" -H "Authorization: Bearer tok-alice" -d '{"mesage": "typo"}'`);
    expect(bad).toBe('{"detail":"Unknown parameter(s) for /echo: mesage. Parameters: message, suffix."} 422');
  });

  it('a handler error ends the stream with event: error and the message', async () => {
    const out = await sh(
      `curl -X POST ${server.url}/gradio_api/call/fail -s -H "Content-Type: application/json" -H "Authorization: Bearer tok-alice" -d '{"data": []}' ` +
        `| awk -F'"' '{ print $4}' | read EVENT_ID; curl -N -s -H "Authorization: Bearer tok-alice" ${server.url}/gradio_api/call/fail/$EVENT_ID`,
    );
    const events = namedEvents(out);
    expect(events.map((e) => e.event)).toEqual(['generating', 'error']);
    expect(events[1].data).toMatchObject({ error: 'kaboom', title: 'Error' });
  });

  it('needs credentials; another user cannot read the event (404), unknown routes are {detail}', async () => {
    expect(await sh(`curl -s -w ' %{http_code}' -X POST ${server.url}/gradio_api/call/echo -H "Content-Type: application/json" -d '{"data": ["x"]}'`)).toBe(
      '{"detail":{"error":"Not authenticated","auth_message":null}} 401',
    );
    const posted = JSON.parse(await sh(`curl -s -X POST ${server.url}/gradio_api/call/echo -H "Content-Type: application/json" -H "Authorization: Bearer tok-alice" -d '{"data": ["mine"]}'`));
    // The attack: bob reads alice's event by its id.
    expect(await sh(`curl -s -w ' %{http_code}' -H "Authorization: Bearer tok-bob" ${server.url}/gradio_api/call/echo/${posted.event_id}`)).toBe('{"detail":"Event not found."} 404');
    const own = await sh(`curl -N -s -H "Authorization: Bearer tok-alice" ${server.url}/gradio_api/call/echo/${posted.event_id}`);
    expect(namedEvents(own).at(-1)?.data).toEqual([{ text: 'mine!', user: 'alice' }]);
    expect(await sh(`curl -s -w ' %{http_code}' -H "Authorization: Bearer tok-alice" ${server.url}/gradio_api/no/such/route`)).toBe('{"detail":"Not Found"} 404');
    expect(await sh(`curl -s -w ' %{http_code}' -X POST ${server.url}/gradio_api/call/nope -H "Content-Type: application/json" -H "Authorization: Bearer tok-alice" -d '{"data": []}'`)).toBe(
      '{"detail":"No endpoint named /nope."} 404',
    );
  });

  it('closing the GET stream aborts the running event', async () => {
    const posted = JSON.parse(await sh(`curl -s -X POST ${server.url}/gradio_api/call/slow -H "Content-Type: application/json" -H "Authorization: Bearer tok-alice" -d '{"data": []}'`));
    await sh(`curl -N -s --max-time 0.5 -H "Authorization: Bearer tok-alice" ${server.url}/gradio_api/call/slow/${posted.event_id} || true`);
    await expect.poll(() => aborted.includes(posted.event_id), { timeout: 3000 }).toBe(true);
  });

  it('/info lists a showApi:false endpoint only with ?all_endpoints=true', async () => {
    const plain = JSON.parse(await sh(`curl -s -H "Authorization: Bearer tok-alice" ${server.url}/gradio_api/info`));
    const all = JSON.parse(await sh(`curl -s -H "Authorization: Bearer tok-alice" "${server.url}/gradio_api/info?all_endpoints=true"`));
    expect(Object.keys(plain.named_endpoints)).toEqual(['/echo', '/fail', '/slow']);
    expect(Object.keys(all.named_endpoints)).toEqual(['/echo', '/fail', '/slow', '/hidden']);
    expect(all.named_endpoints['/hidden'].api_visibility).toBe('undocumented');
  });
});

describe('/login cookie session', () => {
  it('curl: form-urlencoded login sets an HttpOnly cookie that authenticates the call API; wrong password is 401', async () => {
    const jar = `/tmp/gradio-jar-${process.pid}`;
    const bad = await sh(`curl -s -w ' %{http_code}' -X POST ${server.url}/login -d username=alice -d password=nope`);
    expect(bad).toBe('{"detail":"Incorrect credentials."} 401');
    const head = await sh(`curl -s -D - -o /dev/null -c ${jar} -X POST ${server.url}/login -d username=alice -d password=wonderland`);
    expect(head).toMatch(/set-cookie: access-token-[0-9a-f]{16}=tok-alice; Path=\/api\/agent\/gradio; HttpOnly; SameSite=Lax/i);
    const out = await sh(
      `curl -X POST ${server.url}/gradio_api/call/echo -s -b ${jar} -H "Content-Type: application/json" -d '{"data": ["C"]}' | awk -F'"' '{ print $4}' | read EVENT_ID; curl -N -s -b ${jar} ${server.url}/gradio_api/call/echo/$EVENT_ID`,
    );
    expect(namedEvents(out).at(-1)?.data).toEqual([{ text: 'C!', user: 'alice' }]);
  });

  it('@gradio/client with auth: logs in (multipart), predicts, cancels; logout revokes the token', async () => {
    const client = await Client.connect(server.url, { auth: ['alice', 'wonderland'], events: ['data', 'status'] });
    expect((await client.predict('/echo', ['js'])).data).toEqual([{ text: 'js!', user: 'alice' }]);

    const before = aborted.length;
    const job = client.submit('/slow', []);
    let data = 0;
    for await (const message of job) {
      if (message.type === 'data' && ++data === 3) await job.cancel();
    }
    await expect.poll(() => aborted.length, { timeout: 3000 }).toBe(before + 1);
    client.close();

    await expect(Client.connect(server.url, { auth: ['alice', 'wrong'] })).rejects.toThrow(/Invalid credentials/);

    const cookie = (client as unknown as { cookies: string }).cookies;
    const logout = await fetch(`${server.url}/logout`, { headers: { cookie }, redirect: 'manual' });
    expect(logout.status).toBe(302);
    expect(logout.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect(revoked.has('tok-alice')).toBe(true);
    const after = await fetch(`${server.url}/gradio_api/info`, { headers: { cookie } });
    expect(after.status).toBe(401);
    revoked.delete('tok-alice');
  });

  it('@gradio/client with token: receives log and progress messages', async () => {
    const client = await Client.connect(server.url, { token: 'tok-bob' as `hf_${string}`, events: ['data', 'status', 'log'] });
    const logs: { level: string; log: string; title: string }[] = [];
    const progress: unknown[] = [];
    for await (const message of client.submit('/echo', ['p'])) {
      if (message.type === 'log') logs.push({ level: message.level, log: message.log, title: message.title });
      if (message.type === 'status' && message.progress_data) progress.push(message.progress_data);
    }
    expect(logs).toEqual([
      { level: 'info', log: 'started', title: 'Info' },
      { level: 'warning', log: 'almost done', title: 'Careful' },
    ]);
    expect(progress[0]).toEqual([{ index: 1, length: 3, unit: 'steps', progress: null, desc: 'thinking' }]);
  });
});
