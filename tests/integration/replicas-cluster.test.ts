/**
 * Three gateway replicas behind the real nginx (plain round-robin, no stickiness), each a real
 * process, sharing PostgreSQL: the real @gradio/client streams, cancels and confirms with its
 * requests spread over the replicas; a replica SIGKILLed mid-answer leaves a client that ends
 * (a clear retryable error, never a hang), a ledger follower that reconnects through nginx with
 * nothing lost or doubled, a run finished failed / process_exit within the documented bound and a
 * usable conversation; a rolling restart (SIGTERM one replica at a time) loses nothing. Gradio's
 * curl call API (the commands of its docs) and the MCP TypeScript client (streamable HTTP, and
 * the legacy /sse + /messages/ pair with elicitation) work with their requests on different replicas.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login, type Turn } from '../helpers/chat-client.ts';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { readSse, type SseFrame } from '../helpers/sse.ts';

const LONG = 'tell me about yourself and what you can help me with today in detail';
const LEASE_TTL_S = 2;

let db: TestDatabase;
let cluster: Cluster;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  cluster = await startCluster({
    replicas: 3,
    databaseUrl: db.url,
    env: { OFFLINE_MODEL_DELAY_MS: '25', LEASE_TTL_S: String(LEASE_TTL_S), SHUTDOWN_GRACE_MS: '20000', LOG_LEVEL: 'info' },
  });
  token = await login(cluster.url, 'admin');
});

afterAll(async () => {
  await cluster?.stop();
  await db?.drop();
});

const auth = () => ({ authorization: `Bearer ${token}` });
const sh = (line: string) => promisify(execFile)('bash', ['-O', 'lastpipe', '-c', line], { timeout: 30_000 });
/** curl's output of the call API: `event: x` / `data: json` blocks. */
const parseNamedSse = (text: string) =>
  text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [event, data] = block.split('\n');
      return { event: event.slice('event: '.length), data: JSON.parse(data.slice('data: '.length)) as unknown };
    });
async function ledger(conversationId: string): Promise<Array<{ seq: number; kind: string; payload: any }>> {
  const res = await fetch(`${cluster.url}/api/agent/conversations/${conversationId}/events?limit=500`, { headers: auth() });
  return (await res.json()).events;
}
const gapFree = (events: Array<{ seq: number }>) => events.every((e, i) => e.seq === i + 1);
const answerText = (events: Array<{ kind: string; payload: any }>) =>
  events.filter((e) => e.kind === 'assistant.message').map((e) => e.payload.text).join('');

/** How many replicas logged a request to `path`. */
const replicasServing = (path: string) => cluster.replicas.filter((r) => r.output().includes(path)).length;

/** The replica running a conversation's latest run (its owner is host:pid:random). */
async function runnerOf(conversationId: string): Promise<number> {
  const { rows } = await db.pool.query("SELECT owner FROM runs WHERE conversation_id = $1 AND status = 'running'", [conversationId]);
  return cluster.indexOfPid(Number(rows[0].owner.split(':').at(-2)));
}

/**
 * Follows a conversation's ledger stream through nginx, reconnecting with Last-Event-ID, until
 * run.finished. `onOpen` runs at its first frame: the stream is then held by a replica.
 */
async function followLedger(conversationId: string, deadlineMs = 40_000, onOpen = () => {}): Promise<{ ids: number[]; reconnects: number }> {
  const ids: number[] = [];
  let reconnects = -1;
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    reconnects++;
    const headers: Record<string, string> = { ...auth(), ...(ids.length ? { 'last-event-id': String(ids.at(-1)) } : {}) };
    let done = false;
    const seen = (f: SseFrame) => {
      onOpen();
      if (f.id !== undefined) ids.push(Number(f.id));
      done ||= f.event === 'run.finished';
      return done;
    };
    try {
      await readSse(`${cluster.url}/api/agent/conversations/${conversationId}/events/stream`, headers, seen, deadline - Date.now());
    } catch {
      // the replica serving the stream died: reconnect through nginx
    }
    if (done) return { ids, reconnects };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the ledger stream never reached run.finished');
}

describe('three replicas behind nginx round-robin', () => {
  it('1. streams with join, data, heartbeat and cancel spread over the replicas', async () => {
    const client = await connectChat(cluster.url, token);
    const turns: Turn[] = [];
    for (let i = 0; i < 4; i++) turns.push(await collect(chat(client, "what's the health of payments-api")));
    client.close();
    for (const turn of turns) {
      expect(turn.status).toBe('complete');
      expect(turn.final!.content).toMatch(/payments-api/);
      const events = await ledger(turn.final!.metadata.conversation_id);
      expect(gapFree(events)).toBe(true);
      expect(turn.final!.content).toBe(answerText(events));
    }
    expect(replicasServing('/gradio_api/queue/join')).toBeGreaterThanOrEqual(2);
    expect(replicasServing('/gradio_api/queue/data')).toBeGreaterThanOrEqual(2);
  });

  it('2. cancel from whichever replica nginx picks stops the run where it runs', async () => {
    const cancels = () => cluster.replicas.map((r) => r.output().split('/gradio_api/cancel').length);
    let crossed = 0;
    for (let i = 0; i < 8 && crossed < 2; i++) {
      // Shift round-robin's phase, so the cancel meets another replica than the join's.
      for (let k = 0; k < i % 3; k++) await fetch(`${cluster.url}/api/agent/info`);
      const client = await connectChat(cluster.url, token);
      const submission = chat(client, LONG);
      let runner = -1;
      let before: number[] = [];
      const turn = await collect(submission, async (m, index) => {
        if (index !== 3) return;
        runner = await runnerOf(m.metadata.conversation_id);
        before = cancels();
        await submission.cancel();
      });
      client.close();
      const id = turn.messages[0].metadata.conversation_id;
      await expect.poll(async () => (await ledger(id)).at(-1)?.kind, { timeout: 10_000, interval: 100 }).toBe('run.finished');
      const events = await ledger(id);
      expect(events.at(-1)!.payload).toMatchObject({ status: 'cancelled' });
      expect(gapFree(events)).toBe(true);
      const served = cancels().findIndex((n, r) => n > before[r]);
      if (served >= 0 && served !== runner) crossed++;
    }
    expect(crossed).toBeGreaterThanOrEqual(2); // cancels that reached a replica other than the runner's
  });

  it('3. a pending approval is answerable from any replica, exactly once', async () => {
    const a = await connectChat(cluster.url, token);
    const b = await connectChat(cluster.url, token);
    const pause = await collect(chat(a, 'deploy orders-api 9.9.1 to staging'));
    expect(pause.final!.metadata.type).toBe('confirm_required');
    const id = pause.final!.metadata.conversation_id;
    const [x, y] = await Promise.all([collect(chat(a, 'confirm', id, 'confirm')), collect(chat(b, 'confirm', id, 'confirm'))]);
    a.close();
    b.close();
    expect([x, y].filter((t) => t.types.includes('confirm_resolved'))).toHaveLength(1);
    const count = await db.pool.query("SELECT count(*) FROM deployments WHERE service = 'orders-api' AND version = '9.9.1'");
    expect(Number(count.rows[0].count)).toBe(1);
  });

  it('3b. an upload through one replica is readable through every replica, and only by its owner', async () => {
    const form = new FormData();
    form.append('files', new Blob([Buffer.from('shared across replicas\n')]), 'notes.txt');
    const upload = await fetch(`${cluster.url}/api/agent/gradio/gradio_api/upload`, { method: 'POST', headers: auth(), body: form });
    expect(upload.status).toBe(200);
    const [path] = (await upload.json()) as string[];
    const before = cluster.replicas.map((r) => r.output().split('gradio_api/file=').length);
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${cluster.url}/api/agent/gradio/gradio_api/file=${path}`, { headers: auth() });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('shared across replicas\n');
    }
    const served = cluster.replicas.filter((r, i) => r.output().split('gradio_api/file=').length > before[i]).length;
    expect(served).toBe(3);
    const other = await login(cluster.url, 'operator');
    const stolen = await fetch(`${cluster.url}/api/agent/gradio/gradio_api/file=${path}`, { headers: { authorization: `Bearer ${other}` } });
    expect(stolen.status).toBe(404);
  });

  it('4. a replica SIGKILLed mid-answer: the client ends with a retryable error, followers resume, the run fails process_exit, the conversation goes on', async () => {
    const client = await connectChat(cluster.url, token);
    const requestId = randomUUID();
    let conversationId = '';
    let killed = -1;
    let followers: Array<Promise<{ ids: number[]; reconnects: number }>> = [];
    let opened: Promise<unknown> = Promise.resolve();
    const killedAt: number[] = [];
    const submit = () => client.submit('/chat', { message: { text: LONG, files: [] }, conversation_id: '', request_id: requestId });
    const turn = await collect(submit(), async (m, index) => {
      conversationId = m.metadata.conversation_id;
      // Four ledger followers in a row: round-robin puts one on every replica, the doomed one too.
      // The kill waits until each holds its stream: one still connecting when its replica died would
      // be sent on to another by nginx, with nothing to reconnect (seen on a loaded machine).
      if (index === 1) {
        const open = Array.from({ length: 4 }, () => Promise.withResolvers<void>());
        followers = open.map((o) => followLedger(conversationId, 40_000, o.resolve));
        opened = Promise.all(open.map((o) => o.promise));
      }
      if (index === 4) {
        await opened;
        killed = await runnerOf(conversationId);
        cluster.replicas[killed].child.kill('SIGKILL');
        killedAt.push(Date.now());
      }
    });
    expect(killed).toBeGreaterThanOrEqual(0);
    // Never a hang: the stream broke (the killed replica held it) or the bus sweep ended the event.
    expect(turn.status).toBe('error');
    expect(turn.errorMessage ?? '').not.toBe('');

    const results = await Promise.all(followers);
    const events = await ledger(conversationId);
    expect(gapFree(events)).toBe(true);
    for (const { ids } of results) expect(ids).toEqual(events.map((e) => e.seq).filter((s) => s >= ids[0])); // nothing lost, nothing twice
    expect(results.some((r) => r.reconnects > 0)).toBe(true); // one followed through the dead replica and came back
    expect(events.at(-1)!.payload).toMatchObject({ status: 'failed', stop_reason: 'process_exit' });
    // Documented bound: lease expiry plus one recovery sweep (2 x LEASE_TTL_S), plus slack.
    expect(Date.now() - killedAt[0]).toBeLessThan((2 * LEASE_TTL_S + 4) * 1000);

    // The client's retry with the same request_id: the same (failed) turn from the ledger, no second run.
    const retry = await collect(submit());
    expect(retry.final!.metadata).toMatchObject({ type: 'error', retryable: true });
    expect(Number((await db.pool.query('SELECT count(*) FROM runs WHERE request_id = $1', [requestId])).rows[0].count)).toBe(1);

    const again = await collect(chat(client, "what's the health of payments-api", conversationId));
    client.close();
    expect(again.status).toBe('complete');
    expect(again.final!.content).toMatch(/payments-api/);
    await cluster.restart(killed);
  });

  it('4b. a replica SIGKILLed between confirm and its tool: a surviving replica runs the confirmed action, once, with no restart', async () => {
    const client = await connectChat(cluster.url, token);
    const pause = await collect(chat(client, 'deploy checkout-api 8.8.1 to staging'));
    expect(pause.final!.metadata.type).toBe('confirm_required');
    const id = pause.final!.metadata.conversation_id;
    const approvalId = pause.final!.metadata.approval_id as string;
    cluster.api.child.kill('SIGSTOP'); // the resumed tool's call to the api waits
    let killed = -1;
    try {
      await collect(client.submit('/chat', { message: 'confirm', conversation_id: id, action: 'confirm', approval_id: approvalId }), async (m) => {
        if (m.metadata.type !== 'confirm_resolved' || killed >= 0) return;
        killed = await runnerOf(id);
        cluster.replicas[killed].child.kill('SIGKILL');
      });
    } finally {
      cluster.api.child.kill('SIGCONT');
    }
    client.close();
    await cluster.replicas[killed].exited;
    const deployed = async () => Number((await db.pool.query("SELECT count(*) FROM deployments WHERE service = 'checkout-api' AND version = '8.8.1'")).rows[0].count);
    // Bound: the dead replica's lease lapses (LEASE_TTL_S), then the next periodic pass (2 x LEASE_TTL_S).
    await expect.poll(deployed, { timeout: (4 * LEASE_TTL_S + 10) * 1000, interval: 200 }).toBe(1);
    await expect.poll(async () => (await db.pool.query('SELECT resumed_at IS NOT NULL AS r FROM approvals WHERE id = $1', [approvalId])).rows[0].r, { timeout: 10_000 }).toBe(true);
    expect(await deployed()).toBe(1);
    await cluster.restart(killed);
    expect(await deployed()).toBe(1);
  });

  it('6. the curl call API of Gradio\'s docs: POST on one replica, GET on another, the complete answer', async () => {
    const base = `${cluster.url}/api/agent/gradio/gradio_api/call/chat`;
    // Gradio's "Use via API" commands, verbatim but for the token (`| read EVENT_ID` needs lastpipe).
    const line =
      `curl -X POST ${base} -s -H "Content-Type: application/json" -H "Authorization: Bearer ${token}" ` +
      `-d '{"data": [{"text": "what is the health of payments-api", "files": []}]}' ` +
      `| awk -F'"' '{ print $4}' | read EVENT_ID; echo "$EVENT_ID"; curl -N -s -H "Authorization: Bearer ${token}" ${base}/$EVENT_ID`;
    let crossed = 0;
    for (let i = 0; i < 6; i++) {
      const out = (await sh(line)).stdout;
      const [eventId, ...rest] = out.split('\n');
      const frames = parseNamedSse(rest.join('\n'));
      expect(frames.map((f) => f.event)).toContain('generating');
      expect(frames.at(-1)!.event).toBe('complete');
      const final = (frames.at(-1)!.data as any[])[0];
      expect(final.role).toBe('assistant');
      expect(final.content).toMatch(/payments-api/);
      // The complete answer: exactly what the ledger committed, nothing lost or doubled.
      expect(final.content).toBe(answerText(await ledger(final.metadata.conversation_id)));
      // Where the POST ran the event (its run's owner) and which replica served the GET.
      const { rows } = await db.pool.query('SELECT owner FROM runs WHERE conversation_id = $1', [final.metadata.conversation_id]);
      const poster = cluster.indexOfPid(Number(rows[0].owner.split(':').at(-2)));
      const getter = cluster.replicas.findIndex((r) => r.output().includes(`/call/chat/${eventId}`));
      expect(getter).toBeGreaterThanOrEqual(0);
      if (poster !== getter) crossed++;
    }
    expect(crossed).toBeGreaterThanOrEqual(3);
    // One reader, wherever it asks: the same event again is unknown on every replica.
    const again = await sh(`EVENT_ID=$(curl -s -X POST ${base} -H "Content-Type: application/json" -H "Authorization: Bearer ${token}" -d '{"data": [{"text": "hi", "files": []}]}' | awk -F'"' '{ print $4}'); ` +
      `curl -N -s -o /dev/null ${base}/$EVENT_ID -H "Authorization: Bearer ${token}"; for i in 1 2 3; do curl -s -w ' %{http_code}\n' -H "Authorization: Bearer ${token}" ${base}/$EVENT_ID; done`);
    expect(again.stdout.trim().split('\n')).toEqual(Array(3).fill('{"detail":"Event not found."} 404'));
  });

  it('6b. curl reading a call on one replica while another runs it: that one SIGKILLed, curl ends with a retryable error', async () => {
    const base = `${cluster.url}/api/agent/gradio/gradio_api/call/chat`;
    const posted = await sh(`curl -s -X POST ${base} -H "Content-Type: application/json" -H "Authorization: Bearer ${token}" -d '{"data": [{"text": "${LONG}", "files": []}]}'`);
    const eventId = JSON.parse(posted.stdout).event_id as string;
    const reader = spawn('curl', ['-N', '-s', '-H', `Authorization: Bearer ${token}`, `${base}/${eventId}`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    reader.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => reader.once('exit', resolve));
    await expect.poll(() => parseNamedSse(out).filter((f) => f.event === 'generating').length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    // The last generating frame: a heartbeat (data null) may have come after it.
    const conversationId = (parseNamedSse(out).findLast((f) => f.event === 'generating')!.data as any[])[0].metadata.conversation_id;
    const runner = await runnerOf(conversationId);
    const getter = cluster.replicas.findIndex((r) => r.output().includes(`/call/chat/${eventId}`));
    expect(getter).not.toBe(runner); // round-robin: the GET came after the POST, to the next replica
    cluster.replicas[runner].child.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await exited).toBe(0); // never a hang: the bus sweep ended the event where the stream is
    // Bound: the sweep period (2 s) plus slack.
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    const last = parseNamedSse(out).at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.stringify(last.data)).toMatch(/retry/i);
    await cluster.restart(runner);
  });

  it('7. the MCP TypeScript client over streamable HTTP: list, pause, confirm with requests on every replica', async () => {
    const client = new McpClient({ name: 'cluster-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${cluster.url}/api/agent/gradio/gradio_api/mcp/`), { requestInit: { headers: auth() } }),
    );
    const before = cluster.replicas.map((r) => r.output().split('/gradio_api/mcp/').length);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['chat']);
    const paused = (await client.callTool({ name: 'chat', arguments: { message: 'deploy checkout-api 2.4.2 to staging' } })) as any;
    expect(paused.isError).toBeFalsy();
    const { approval_id: approvalId, conversation_id: conversationId } = paused.structuredContent.result[0].metadata;
    expect(paused.content[0].text).toContain(`approval_id "${approvalId}"`);
    const confirm = { name: 'chat', arguments: { message: 'confirm', conversation_id: conversationId, action: 'confirm', approval_id: approvalId } };
    const done = (await client.callTool(confirm)) as any;
    expect(done.isError).toBeFalsy();
    const again = (await client.callTool(confirm)) as any;
    expect(again.content[0].text).toMatch(/^APPROVAL_NOT_FOUND: /);
    await client.close();
    const deployed = await db.pool.query("SELECT count(*)::int AS n FROM deployments WHERE service = 'checkout-api' AND version = '2.4.2'");
    expect(deployed.rows[0].n).toBe(1);
    const served = cluster.replicas.filter((r, i) => r.output().split('/gradio_api/mcp/').length > before[i]).length;
    expect(served).toBe(3);
  });

  it('8. MCP over the legacy /sse transport: the stream on one replica, its /messages/ POSTs on all, elicitation confirms once', async () => {
    const withToken = (t: string) => ({
      requestInit: { headers: { Authorization: `Bearer ${t}` } },
      eventSourceInit: { fetch: (url: string | URL, init?: RequestInit) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${t}` } }) },
    });
    const transport = new SSEClientTransport(new URL(`${cluster.url}/api/agent/gradio/gradio_api/mcp/sse`), withToken(token));
    const client = new McpClient({ name: 'cluster-sse', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { decision: 'confirm' } };
    });
    const before = cluster.replicas.map((r) => r.output().split('/gradio_api/mcp/messages').length);
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['chat']);
    const result = (await client.callTool({ name: 'chat', arguments: { message: 'deploy checkout-api 2.4.3 to staging' } })) as any;
    expect(asked).toHaveLength(1);
    expect(result.isError).toBeFalsy();
    const deployed = await db.pool.query("SELECT count(*)::int AS n FROM deployments WHERE service = 'checkout-api' AND version = '2.4.3'");
    expect(deployed.rows[0].n).toBe(1);
    // initialize, initialized, tools/list, tools/call and the elicitation answer: spread by round-robin.
    const posted = cluster.replicas.filter((r, i) => r.output().split('/gradio_api/mcp/messages').length > before[i]).length;
    expect(posted).toBeGreaterThanOrEqual(2);

    // The attack, on every replica: another user posting into the session by its id reads 404; its owner gets 202.
    const endpoint = (transport as unknown as { _endpoint: URL })._endpoint;
    const post = (t: string, id: number) =>
      fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t}` }, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }) });
    const viewer = await login(cluster.url, 'viewer');
    for (let i = 0; i < 3; i++) expect((await post(viewer, 90 + i)).status).toBe(404);
    for (let i = 0; i < 3; i++) expect((await post(token, 95 + i)).status).toBe(202);
    const bad = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...auth() }, body: '{"not":"jsonrpc"}' });
    expect(bad.status).toBe(400);
    await client.close();
    // Closed: the session is gone on every replica.
    await expect.poll(async () => (await post(token, 99)).status, { timeout: 5_000 }).toBe(404);
  });

  it('5. a rolling restart (SIGTERM one replica at a time) loses nothing', async () => {
    const client = await connectChat(cluster.url, token);
    let restarts: Promise<void> | undefined;
    const turn = await collect(chat(client, LONG), async (m, index) => {
      if (index !== 1) return;
      // The replica running this answer goes first, mid-answer; then the others.
      const runner = await runnerOf(m.metadata.conversation_id);
      const order = [runner, ...[0, 1, 2].filter((i) => i !== runner)];
      restarts = (async () => {
        for (const i of order) {
          await cluster.replicas[i].stop(30_000);
          await cluster.restart(i);
        }
      })();
    });
    await restarts;
    // A new turn after every replica restarted, on the same client.
    const after = await collect(chat(client, "what's the health of payments-api"));
    client.close();
    expect(turn.status).toBe('complete');
    const events = await ledger(turn.final!.metadata.conversation_id);
    expect(gapFree(events)).toBe(true);
    expect(events.at(-1)!.payload).toMatchObject({ status: 'done' });
    expect(turn.final!.content).toBe(answerText(events));
    expect(after.status).toBe('complete');
  });
});
