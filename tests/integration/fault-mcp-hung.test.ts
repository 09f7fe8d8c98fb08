/**
 * Fault (issue 30, item 7 / finding 8): the start never waits on a tool server.
 * - A hung HTTP MCP server (accepts the connection, never answers) in the tools file: the gateway
 *   is ready in well under Fastify's plugin timeout (10 s; it waited 10 s and failed with "Plugin
 *   did not start in time: 'gatewayRoutes'" before), answers /chat, and shows the server
 *   `connecting` (or `down`) in the status.
 * - A tool whose input schema is nested 3,000 deep marks its server down with the reason; the
 *   gateway starts.
 * - A start that fails leaves no stdio child running: a process that spawned a stdio MCP server
 *   which ignores the end of its stdin and SIGTERM exits with code 1, and the child is gone.
 * Real PostgreSQL, the real gateway in process, the real @gradio/client.
 */
import { spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const table = createFaultTable('mcp-hung');
const DEPTH = 3_000;

let db: TestDatabase;
let dir: string;
let hung: TcpServer;
const sockets = new Set<Socket>();
let deep: Awaited<ReturnType<typeof startDeepMcp>>;

/** `{type: object, properties: {a: …}}` nested `depth` times, as JSON text (JSON.stringify itself overflows at this depth). */
const nestedSchema = (depth: number) => '{"type":"object","properties":{"a":'.repeat(depth) + '{"type":"string"}' + '}}'.repeat(depth);

/** A minimal streamable-HTTP MCP server (JSON responses) whose one tool has a 3,000-deep input schema. */
async function startDeepMcp(): Promise<{ url: string; close(): Promise<void> }> {
  const http = createHttpServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const message = raw ? JSON.parse(raw) : {};
    if (message.id === undefined) return void res.writeHead(202).end();
    const result =
      message.method === 'initialize'
        ? JSON.stringify({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'deep', version: '1.0.0' } })
        : message.method === 'tools/list'
          ? `{"tools":[{"name":"nest","description":"Deep.","inputSchema":${nestedSchema(DEPTH)}}]}`
          : '{}';
    res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${result}}`);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as { port: number }).port}`,
    close: () => new Promise<void>((r) => { http.closeAllConnections(); http.close(() => r()); }),
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'airlock-mcp-hung-'));
  // Accepts every connection and never writes a byte.
  hung = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
  deep = await startDeepMcp();
});

afterAll(async () => {
  table.print();
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => hung.close(() => r()));
  await deep?.close();
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

describe('a hung MCP server at start', () => {
  let server: TestServer;
  afterAll(async () => server?.close());

  it('the gateway is ready at once, answers /chat, and shows the hung server connecting; the deep schema marks its server down', async () => {
    const toolsFile = join(dir, 'tools.yaml');
    await writeFile(
      toolsFile,
      ['servers:', '  - name: hung', `    url: http://127.0.0.1:${(hung.address() as { port: number }).port}/mcp`, '  - name: deep', `    url: ${deep.url}/mcp`, ''].join('\n'),
    );
    const started = Date.now();
    server = await startTestServer({ db, env: { TOOLS_FILE: toolsFile, MCP_TIMEOUT_MS: '60000' }, waitForTools: false });
    const readyMs = Date.now() - started;
    expect(readyMs).toBeLessThan(5_000); // Fastify's plugin timeout is 10 s
    expect(sockets.size).toBeGreaterThan(0); // it did connect, and hangs

    const token = await login(server.url, 'admin');
    const client = await connectChat(server.url, token);
    const turn = await collect(chat(client, 'hello'));
    client.close();
    expect(turn.status).toBe('complete');
    expect(turn.types).not.toContain('error');
    expect(turn.final?.content.length).toBeGreaterThan(0);

    type Status = { servers: Array<{ name: string; status: string; last_error: string | null }> };
    const status = async (): Promise<Status> => (await fetch(`${server.url}/api/agent/tools/servers`, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<Status>;
    let s = await status();
    for (let i = 0; i < 100 && s.servers.find((x) => x.name === 'deep')?.status === 'connecting'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      s = await status();
    }
    const hungStatus = s.servers.find((x) => x.name === 'hung');
    const deepStatus = s.servers.find((x) => x.name === 'deep');
    expect(['connecting', 'down']).toContain(hungStatus?.status);
    expect(deepStatus?.status).toBe('down');
    expect(deepStatus?.last_error).toMatch(/input schema nested deeper than 64 levels/);
    expect((await fetch(`${server.url}/api/agent/v1/health`)).status).toBe(200);
    table.record({ fault: 'hung MCP server at start', outcome: `ready in ${readyMs} ms, /chat answered, hung: ${hungStatus?.status}, 3,000-deep schema: down, process up`, lost: 0 });
  });
});

describe('a failed start', () => {
  it('leaves no stdio MCP child running', async () => {
    // A stdio "server" that ignores the end of its stdin and SIGTERM, and writes its pid.
    const pidFile = join(dir, 'child.pid');
    const childScript = join(dir, 'stubborn.cjs');
    await writeFile(childScript, `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); process.on('SIGTERM', () => {}); process.stdin.on('end', () => {}); setInterval(() => {}, 1000);`);
    // The parent connects to it (in the background, as the gateway does), then its start fails: exit(1).
    const parentScript = join(dir, 'parent.ts');
    const connection = resolve('server/agent/mcp/connection.ts');
    await writeFile(
      parentScript,
      [
        `import { existsSync } from 'node:fs';`,
        `import { McpConnection } from ${JSON.stringify(connection)};`,
        `const c = new McpConnection({ name: 'stubborn', transport: 'stdio', command: process.execPath, args: [${JSON.stringify(childScript)}] } as never, { timeoutMs: 60_000, onChange: () => {} });`,
        `void c.connect();`,
        `const t = setInterval(() => { if (existsSync(${JSON.stringify(pidFile)})) { clearInterval(t); process.exit(1); } }, 20);`,
      ].join('\n'),
    );
    const parent = spawn(process.execPath, ['--import', 'tsx', parentScript], { stdio: 'ignore' });
    const code = await new Promise<number | null>((r) => parent.on('exit', r));
    expect(code).toBe(1);
    const pid = Number(await readFile(pidFile, 'utf8'));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 50 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
    const survived = alive();
    if (survived) process.kill(pid, 'SIGKILL');
    expect(survived).toBe(false);
    table.record({ fault: 'failed start with a stdio MCP child', outcome: survived ? 'child left running' : 'child stopped', lost: 0 });
  }, 30_000);
});
