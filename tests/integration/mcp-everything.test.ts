/**
 * MCP over streamable HTTP, end to end: the real @modelcontextprotocol/server-everything as a child
 * process (its binary path, `streamableHttp`), loaded from a TOOLS_FILE. Structured output reaches
 * the card; a long result is cut for the model with a note; the server SIGKILLed mid-call ends that
 * call as tool_error TOOL_FAILURE while the run carries on; once it is back, the next turn works.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chat, collect, connectChat, login, type WireMessage } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { freePort } from '../helpers/nginx.ts';
import { startTestServer, type TestServer, toolServers } from '../helpers/server.ts';

const EVERYTHING = resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js');

let db: TestDatabase;
let server: TestServer;
let admin: Client;
let dir: string;
let port: number;
let everything: ChildProcess;

const meta = (m: WireMessage | undefined) => (m?.metadata ?? {}) as Record<string, unknown>;

/** Starts the everything server on `port` and resolves once it listens. */
function startEverything(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolvePromise, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on port/.test(output)) resolvePromise(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`everything exited ${code}: ${output}`)));
  });
}

async function serverStatus(name = 'everything'): Promise<Record<string, unknown>> {
  const status = await toolServers(server.url);
  return status.servers.find((s: { name: string }) => s.name === name);
}

async function waitForStatus(want: string, timeoutMs = 30_000, name = 'everything'): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await serverStatus(name);
    if (s.status === want || Date.now() > until) return s;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The pid of the stdio everything server this (gateway) process spawned: its child, by parent pid. */
async function stdioChildPid(): Promise<number> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid !== process.pid) continue;
    const cmdline = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (cmdline.includes(EVERYTHING) && cmdline.includes('stdio')) return Number(entry);
  }
  throw new Error('the stdio MCP server is not a child of this process');
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-mcp-everything-'));
  port = await freePort();
  everything = await startEverything();
  const toolsFile = join(dir, 'tools.json');
  await writeFile(
    toolsFile,
    JSON.stringify({
      servers: [
        { name: 'everything', url: `http://127.0.0.1:${port}/mcp` },
        // The same server over stdio, as a child of the gateway: it must not inherit the gateway's secrets.
        { name: 'local', command: process.execPath, args: [EVERYTHING, 'stdio'], env: { AIRLOCK_MCP_MARKER: 'given-by-the-tools-file' } },
      ],
    }),
  );
  // A secret in the gateway's own environment (like SERVICE_CLIENT_SECRET in production).
  process.env.AIRLOCK_SECRET_PROBE = 'gateway-secret-probe-7f3a';
  db = await createTestDatabase();
  // The gateway runs in this process; in production its environment holds its own DATABASE_URL.
  // Set here from the database it uses, so that the leak check below means the same whether the
  // suite runs on DATABASE_URL or on the embedded PostgreSQL (where the variable is unset).
  vi.stubEnv('DATABASE_URL', db.url);
  server = await startTestServer({ db, env: { TOOLS_FILE: toolsFile, TOOL_RESULT_MAX_CHARS: '120', MCP_TIMEOUT_MS: '20000' } });
  admin = await connectChat(server.url, await login(server.url, 'admin'));
}, 60_000);

afterAll(async () => {
  admin?.close();
  await server?.close();
  vi.unstubAllEnvs();
  everything?.kill('SIGKILL');
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// Two servers offer the same tools (everything over HTTP, local over stdio): each request names its server.
describe('MCP everything server over streamable HTTP', () => {
  it('lists its tools: readiness says up with the tool count', async () => {
    const s = await serverStatus();
    expect(s).toMatchObject({ transport: 'http', status: 'up', last_error: null });
    expect(Number(s.tools)).toBeGreaterThanOrEqual(10);
  });

  it('a call with structuredContent shows the structured object on the card', async () => {
    const turn = await collect(chat(admin, 'get the structured content for Chicago from everything'));
    expect(turn.status).toBe('complete');
    const start = turn.messages.find((m) => m.metadata.type === 'tool_start');
    expect(meta(start)).toMatchObject({ tool: 'everything_get_structured_content', input: { location: 'Chicago' } });
    const end = turn.messages.find((m) => m.metadata.type === 'tool_end');
    expect(meta(end).output).toEqual({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
    expect(turn.final!.content).toMatch(/36/);
  });

  it('a long result is cut for the model with a note; the card keeps it whole', async () => {
    const turn = await collect(chat(admin, 'get the env from everything'));
    const end = turn.messages.find((m) => m.metadata.type === 'tool_end');
    expect(meta(end)).toMatchObject({ tool: 'everything_get_env' });
    expect(JSON.stringify(meta(end).output).length).toBeGreaterThan(120);
    expect(turn.final!.content).toMatch(/Result cut: \d+ characters, only the first 120 are shown/);
  });

  it("a stdio server is a child of the gateway but never sees the gateway's secrets, only PATH & co and its own env", async () => {
    const turn = await collect(chat(admin, 'get the env from local'));
    const end = turn.messages.find((m) => m.metadata.type === 'tool_end');
    expect(meta(end)).toMatchObject({ tool: 'local_get_env' });
    const env = JSON.stringify(meta(end).output);
    expect(env).toContain('given-by-the-tools-file');
    expect(env).toContain('PATH');
    // the gateway process has both; the child got neither
    expect(process.env.AIRLOCK_SECRET_PROBE).toBe('gateway-secret-probe-7f3a');
    expect(process.env.DATABASE_URL).toBe(db.url);
    expect(env).not.toContain('gateway-secret-probe-7f3a');
    expect(env).not.toContain('DATABASE_URL');
    expect(env).not.toContain(db.url);
  });

  it('the server killed mid-call: tool_error TOOL_FAILURE, the run carries on; after it comes back the next turn works', async () => {
    // 1. kill -9 the server while its 10 s operation runs (1.5 s in: the call's stream is open)
    let killedAt = 0;
    let timer: NodeJS.Timeout | undefined;
    const turn = await collect(chat(admin, 'trigger the long running operation on everything with duration 10 and steps 10'), (m) => {
      if (m.metadata.type === 'tool_start' && !timer) {
        timer = setTimeout(() => {
          killedAt = Date.now();
          everything.kill('SIGKILL');
        }, 1500);
      }
    });
    expect(killedAt).toBeGreaterThan(0);
    expect(turn.status).toBe('complete');
    const failure = turn.messages.find((m) => m.metadata.type === 'tool_error');
    expect(meta(failure)).toMatchObject({ tool: 'everything_trigger_long_running_operation', code: 'TOOL_FAILURE' });
    expect(turn.types).not.toContain('tool_end');
    expect(turn.final!.content.length).toBeGreaterThan(0);
    // well before the 10 s operation or the 20 s request timeout would have ended it
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    const rows = (await db.pool.query('SELECT outcome, error_code FROM audit_log WHERE tool_call_id = $1', [meta(failure).tool_call_id])).rows;
    expect(rows).toEqual([{ outcome: 'error', error_code: 'TOOL_FAILURE' }]);

    // 2. readiness says down, with the reason
    const down = await waitForStatus('down', 5_000);
    expect(down).toMatchObject({ status: 'down', tools: 0 });
    expect(String(down.last_error).length).toBeGreaterThan(0);

    // 3. the server comes back on its port; the gateway reconnects by itself (backoff)
    everything = await startEverything();
    expect(await waitForStatus('up')).toMatchObject({ status: 'up' });
    const next = await collect(chat(admin, 'get the structured content for New York from everything'));
    expect(meta(next.messages.find((m) => m.metadata.type === 'tool_end')).output).toEqual({ temperature: 33, conditions: 'Cloudy', humidity: 82 });
  }, 60_000);

  it('a stdio server killed mid-call: TOOL_FAILURE, then the gateway starts it again and the next turn works', async () => {
    const pid = await stdioChildPid();
    let timer: NodeJS.Timeout | undefined;
    const turn = await collect(chat(admin, 'trigger the long running operation on local with duration 10 and steps 10'), (m) => {
      if (m.metadata.type === 'tool_start' && !timer) timer = setTimeout(() => process.kill(pid, 'SIGKILL'), 1500);
    });
    expect(timer).toBeDefined();
    expect(meta(turn.messages.find((m) => m.metadata.type === 'tool_start'))).toMatchObject({ tool: 'local_trigger_long_running_operation' });
    expect(meta(turn.messages.find((m) => m.metadata.type === 'tool_error'))).toMatchObject({ code: 'TOOL_FAILURE' });
    expect(turn.status).toBe('complete');
    expect(await waitForStatus('up', 30_000, 'local')).toMatchObject({ status: 'up' });
    expect(await stdioChildPid()).not.toBe(pid);
    const next = await collect(chat(admin, 'get the structured content for Los Angeles from local'));
    expect(meta(next.messages.find((m) => m.metadata.type === 'tool_end'))).toMatchObject({ tool: 'local_get_structured_content', output: { temperature: 73 } });
  }, 60_000);
});
