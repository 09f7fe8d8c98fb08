/**
 * MCP over stdio, end to end: the real @modelcontextprotocol/server-filesystem (started by its
 * binary path) on a temp folder, loaded from a TOOLS_FILE; the real gateway, @gradio/client and
 * PostgreSQL; the offline model choosing the tools from their names and schemas.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login, type WireMessage } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer, toolServers } from '../helpers/server.ts';

const FS_SERVER = resolve('node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

let db: TestDatabase;
let server: TestServer;
let admin: Client;
let dir: string;

const meta = (m: WireMessage | undefined) => (m?.metadata ?? {}) as Record<string, unknown>;
const exists = (path: string) => stat(path).then(() => true, () => false);
const auditRows = async (toolCallId: string) =>
  (await db.pool.query('SELECT * FROM audit_log WHERE tool_call_id = $1 ORDER BY id', [toolCallId])).rows;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-mcp-fs-'));
  await writeFile(join(dir, 'readme.txt'), 'Airlock notes: the door opens inward.\n');
  const toolsFile = join(dir, '..', `${dir.split('/').pop()}-tools.yaml`);
  // One good server, and three that must not stop the start: an entry without command or url,
  // an HTTP server nobody listens on, and a second server under the same name.
  await writeFile(
    toolsFile,
    [
      'servers:',
      '  - name: filesystem',
      `    command: ${process.execPath}`,
      `    args: [${JSON.stringify(FS_SERVER)}, ${JSON.stringify(dir)}]`,
      '  - name: broken',
      '    args: [nothing]',
      '  - name: nowhere',
      '    url: http://127.0.0.1:9/mcp',
      '  - name: FileSystem',
      `    command: ${process.execPath}`,
      `    args: [${JSON.stringify(FS_SERVER)}, ${JSON.stringify(dir)}]`,
    ].join('\n'),
  );
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { TOOLS_FILE: toolsFile, MCP_TIMEOUT_MS: '5000' } });
  admin = await connectChat(server.url, await login(server.url, 'admin'));
});

afterAll(async () => {
  admin?.close();
  await server?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('MCP filesystem server over stdio', () => {
  it('readiness lists each server: the good one up with its tools, the others down with the reason', async () => {
    const status = await toolServers(server.url);
    const byName = Object.fromEntries(status.servers.map((s: { name: string }) => [s.name, s]));
    expect(byName.filesystem).toMatchObject({ transport: 'stdio', status: 'up', last_error: null });
    expect(byName.filesystem.tools).toBeGreaterThanOrEqual(10);
    expect(byName.broken).toMatchObject({ status: 'down', tools: 0 });
    expect(byName.broken.last_error).toMatch(/command \(stdio\) or url/);
    expect(byName.nowhere).toMatchObject({ transport: 'http', status: 'down', tools: 0 });
    expect(byName.nowhere.last_error).toMatch(/connect failed/);
    expect(byName.nowhere.next_retry_at).not.toBeNull();
    expect(byName.FileSystem).toMatchObject({ status: 'down' });
    expect(byName.FileSystem.last_error).toMatch(/already used/);
  });

  it('reading a file runs at once (readOnlyHint: allow) and the card shows its text', async () => {
    const turn = await collect(chat(admin, `read the file ${join(dir, 'readme.txt')}`));
    expect(turn.status).toBe('complete');
    expect(turn.types).not.toContain('confirm_required');
    const end = turn.messages.find((m) => m.metadata.type === 'tool_end');
    expect(meta(end)).toMatchObject({ tool: 'filesystem_read_file' });
    expect(JSON.stringify(meta(end).output)).toContain('the door opens inward');
    expect(turn.final!.content).toContain('the door opens inward');
    const [row] = await auditRows(String(meta(end).tool_call_id));
    expect(row).toMatchObject({ operation: 'filesystem_read_file', method: 'MCP', path: 'mcp://filesystem/read_file', outcome: 'success', policy_action: 'allow', username: 'admin', user_role: 'admin', service_actor: 'airlock-gateway' });
    expect(row.arguments).toEqual({ path: join(dir, 'readme.txt') });
    expect(row.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('listing a directory runs at once', async () => {
    const turn = await collect(chat(admin, `list the directory ${dir}`));
    const end = turn.messages.find((m) => m.metadata.type === 'tool_end');
    expect(meta(end)).toMatchObject({ tool: 'filesystem_list_directory' });
    expect(JSON.stringify(meta(end).output)).toContain('readme.txt');
  });

  it('write_file stops at confirm_required naming the server and the arguments; confirm writes the file once', async () => {
    const target = join(dir, 'notes.txt');
    // 1. the destructive tool pauses; nothing is written yet
    const first = await collect(chat(admin, `write hello to ${target}`));
    const card = first.messages.find((m) => m.metadata.type === 'confirm_required');
    expect(meta(card)).toMatchObject({ tool: 'filesystem_write_file', input: { path: target, content: 'hello' } });
    expect(String(meta(card).prompt)).toContain('MCP server "filesystem"');
    expect(String(meta(card).prompt)).toContain(`path=${target}`);
    expect(await exists(target)).toBe(false);
    const id = card!.metadata.conversation_id;

    // 2. confirm runs it: the file holds the text once
    const second = await collect(chat(admin, 'confirm', id, 'confirm'));
    expect(meta(second.messages[0])).toMatchObject({ type: 'confirm_resolved', result: 'confirmed' });
    const end = second.messages.find((m) => m.metadata.type === 'tool_end');
    expect(meta(end)).toMatchObject({ tool: 'filesystem_write_file' });
    expect(await readFile(target, 'utf8')).toBe('hello');

    // 3. a second confirm runs nothing more; one audit row, a success
    const again = await collect(chat(admin, 'confirm', id, 'confirm'));
    expect(meta(again.final)).toMatchObject({ type: 'error', code: 'APPROVAL_NOT_FOUND' });
    const rows = await auditRows(String(meta(end).tool_call_id));
    // Who confirmed (the decision's row), then the one call it allowed.
    expect(rows.map((r) => [r.operation, r.outcome])).toEqual([['approval.approve', 'success'], ['filesystem_write_file', 'success']]);
    expect(rows[1]).toMatchObject({ policy_action: 'require_approval', arguments: { path: target, content: 'hello' } });
  });

  it('deny writes nothing, says so, and is audited as denied', async () => {
    const target = join(dir, 'denied.txt');
    const first = await collect(chat(admin, `write "do not write me" to ${target}`));
    const card = first.messages.find((m) => m.metadata.type === 'confirm_required');
    expect(meta(card)).toMatchObject({ tool: 'filesystem_write_file' });
    const second = await collect(chat(admin, 'deny', card!.metadata.conversation_id, 'deny'));
    expect(meta(second.messages[0])).toMatchObject({ type: 'confirm_resolved', result: 'denied' });
    expect(second.types).not.toContain('tool_end');
    expect(second.final!.content).toMatch(/not/i);
    expect(await exists(target)).toBe(false);
    const toolError = second.messages.find((m) => m.metadata.type === 'tool_error');
    const rows = await auditRows(String(meta(toolError).tool_call_id));
    expect(rows).toMatchObject([
      { operation: 'approval.deny', outcome: 'success', username: 'admin' },
      { operation: 'filesystem_write_file', outcome: 'denied', error_code: 'DENIED', policy_action: 'require_approval' },
    ]);
  });

  it('the built-in tools stay beside the MCP tools', async () => {
    const turn = await collect(chat(admin, "what's the health of payments-api"));
    expect(meta(turn.messages.find((m) => m.metadata.type === 'tool_end'))).toMatchObject({ tool: 'check_health' });
  });
});

describe('BUILTIN_TOOLS=false: the MCP tools alone', () => {
  let only: TestServer;
  let client: Client;
  beforeAll(async () => {
    const toolsFile = join(dir, 'only-fs.json');
    await writeFile(toolsFile, JSON.stringify({ servers: [{ name: 'filesystem', command: process.execPath, args: [FS_SERVER, dir] }] }));
    only = await startTestServer({ db, env: { TOOLS_FILE: toolsFile, BUILTIN_TOOLS: 'false' } });
    client = await connectChat(only.url, await login(only.url, 'admin'));
  });
  afterAll(async () => {
    client?.close();
    await only?.close();
  });

  it('a built-in request finds no built-in tool; an MCP request still runs', async () => {
    const health = await collect(chat(client, "what's the health of payments-api"));
    expect(health.types).not.toContain('tool_start');
    const read = await collect(chat(client, `read the file ${join(dir, 'readme.txt')}`));
    expect(meta(read.messages.find((m) => m.metadata.type === 'tool_end'))).toMatchObject({ tool: 'filesystem_read_file' });
  });
});

describe('a bad tools file never stops the start', () => {
  const cases: Array<[label: string, content: string | null, error: RegExp]> = [
    ['missing', null, /cannot read the tools file .*ENOENT/],
    ['not YAML', 'servers: [ {name: x', /not valid YAML or JSON/],
  ];
  it.each(cases)('%s: the gateway starts, readiness names the problem, the built-in tools work', async (_label, content, error) => {
    const file = join(dir, `bad-${Math.random().toString(36).slice(2)}.yaml`);
    if (content !== null) await writeFile(file, content);
    const started = await startTestServer({ db, env: { TOOLS_FILE: file } });
    try {
      const status = await toolServers(started.url);
      expect(status).toMatchObject({ file: basename(file), servers: [] }); // by name only: no absolute path (issue 30)
      expect(status.file_error).toMatch(error);
      const client = await connectChat(started.url, await login(started.url, 'admin'));
      const turn = await collect(chat(client, "what's the health of payments-api"));
      client.close();
      expect(meta(turn.messages.find((m) => m.metadata.type === 'tool_end'))).toMatchObject({ tool: 'check_health' });
    } finally {
      await started.close();
    }
  });
});
