/**
 * The MCP tool source: every server of the tools file, its connection, and the LangChain tools made
 * from its tools. The agent executes every tool it has ever seen (a paused call resumes even if its
 * server went down meanwhile: it then fails cleanly), but offers the model only tools of servers
 * that are up. Names are `<server>_<tool>`; a name taken by a built-in tool or an earlier server
 * (file order) marks the later server down with the reason, for good.
 * @module
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { unknownTool } from '../tools/define.ts';
import type { ToolCallContext, ToolResult, ToolSource, ToolSourceDescription, ToolSourceStatus, ToolUser } from '../tool-source.ts';
import type { McpAuditSink } from './audit.ts';
import { McpConnection, type ServerHealth } from './connection.ts';
import type { McpTokenMinter } from './identity.ts';
import { firstCollision, mcpToolName, sanitizeName } from './names.ts';
import { loadToolsFile, type ToolsFile } from './tools-file.ts';
import { defineMcpTool, type McpTool } from './tool.ts';

export const MCP_KIND = 'mcp';

/** The name ending of a tool's preview tool on the same MCP server. */
const PREVIEW_SUFFIX = '_preview';

export interface McpSourceOptions {
  /** TOOLS_FILE; unset: no MCP servers. */
  file?: string;
  /** The file as the one loader read it for every kind (tool-sources.ts); absent: read here. */
  loaded?: ToolsFile;
  timeoutMs: number;
  resultMaxChars: number;
  /** Names the built-in tools hold. */
  reservedNames: Iterable<string>;
  /** Mints the per-call token of `identity: "token"` servers (the only identity a tool server gets). */
  mintToken?: McpTokenMinter;
  audit?: McpAuditSink;
  warn?: (message: string, error: unknown) => void;
  backoff?: (attempt: number) => number;
}

/** One server as readiness reports it. */
export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  status: ServerHealth;
  tools: number;
  last_error: string | null;
  next_retry_at: string | null;
}

/** What `GET /api/agent/tools/servers` shows (status-view.ts). */
export interface McpServersStatus {
  file: string | null;
  file_error: string | null;
  servers: McpServerStatus[];
}

/** The source's status: the servers, and the generic part (readiness shows its `mcp` block). */
export type McpSourceStatus = McpServersStatus & ToolSourceStatus;

interface Registered {
  name: string;
  server: string;
  tool: McpTool;
}

function collisionReason(name: string, owner: string): string {
  return `tool name ${name} collides with ${owner}`;
}

export class McpToolSource implements ToolSource {
  #connections: McpConnection[] = [];
  #invalid: McpServerStatus[] = [];
  #fileError: string | null = null;
  #registered = new Map<string, Registered>();
  /** Server name -> the names it holds while up. */
  #claims = new Map<string, string[]>();
  #reserved: Set<string>;
  /** Bumped whenever the set of executable or offered tools changes. */
  #version = 0;
  #described: ToolSourceDescription | null = null;

  constructor(private readonly options: McpSourceOptions) {
    this.#reserved = new Set(options.reservedNames);
  }

  /** The first connect attempt of every server, settled (tests and logs wait on it; the start never does). */
  #firstAttempts: Promise<void> = Promise.resolve();

  /**
   * Loads the file and starts connecting to every server in the background: the start never waits
   * on a tool server (a hung one held the gateway past Fastify's plugin timeout, issue 30). A
   * server is `connecting` until its first attempt ends; its tools appear when it is up.
   */
  async start(): Promise<void> {
    if (!this.options.file) return;
    this.#load(this.options.loaded ?? (await loadToolsFile(this.options.file)));
    this.#firstAttempts = Promise.allSettled(this.#connections.map((c) => c.connect())).then(() => undefined);
  }

  /** Resolves when every server's first connect attempt has ended (up or down), or after `waitMs`. */
  async settled(waitMs = Infinity): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const cap = Number.isFinite(waitMs) ? new Promise<void>((r) => (timer = setTimeout(r, waitMs))) : new Promise<void>(() => {});
    await Promise.race([this.#firstAttempts, cap]);
    clearTimeout(timer);
  }

  #load(file: ToolsFile): void {
    this.#fileError = file.error ?? null;
    const names = new Set<string>();
    for (const entry of file.entries) {
      if (!entry.ok) {
        this.#invalid.push({ name: entry.name, transport: entry.transport ?? 'stdio', status: 'down', tools: 0, last_error: `invalid server entry: ${entry.error}`, next_retry_at: null });
        continue;
      }
      const key = sanitizeName(entry.server.name);
      const connection = new McpConnection(entry.server, {
        timeoutMs: this.options.timeoutMs,
        mintToken: this.options.mintToken,
        backoff: this.options.backoff,
        onChange: () => this.#changed(connection),
      });
      this.#connections.push(connection);
      if (!key || names.has(key)) connection.markDown(`the server name "${entry.server.name}" is ${key ? 'already used by an earlier server' : 'empty once sanitized'}`, { permanent: true });
      names.add(key);
    }
    this.#version++;
  }

  /** A server came up, went down or changed its tools: claim or release its names. */
  #changed(connection: McpConnection): void {
    const server = connection.config.name;
    if (connection.health !== 'up') {
      if (this.#claims.delete(server)) this.#version++;
      return;
    }
    const names = connection.tools.map((t) => mcpToolName(server, t.name));
    const index = this.#connections.indexOf(connection);
    const owners = new Map([...this.#reserved].map((n) => [n, 'a built-in tool']));
    for (const [other, held] of this.#claims) {
      if (other === server) continue;
      const otherIndex = this.#connections.findIndex((c) => c.config.name === other);
      const clash = held.find((n) => names.includes(n));
      // The later server in the file loses, whichever came up first.
      if (clash && otherIndex > index) this.#connections[otherIndex].markDown(collisionReason(clash, `the server "${server}"`), { permanent: true });
      else held.forEach((n) => owners.set(n, `the server "${other}"`));
    }
    const collision = firstCollision(names, new Set(owners.keys()));
    if (collision) return connection.markDown(collisionReason(collision, owners.get(collision) ?? 'another of its own tools'), { permanent: true });
    this.#claims.set(server, names);
    // A `<tool>_preview` beside `<tool>` is that tool's preview (issue 27): asked before its approval,
    // never offered to the model.
    const own = new Set(connection.tools.map((t) => t.name));
    const previews = new Set(connection.tools.filter((t) => t.name.endsWith(PREVIEW_SUFFIX) && own.has(t.name.slice(0, -PREVIEW_SUFFIX.length))).map((t) => t.name));
    connection.tools.forEach((mcpTool, i) => {
      if (previews.has(mcpTool.name)) return;
      const previewTool = previews.has(mcpTool.name + PREVIEW_SUFFIX) ? mcpTool.name + PREVIEW_SUFFIX : undefined;
      const deps = { connection, audit: this.options.audit, resultMaxChars: this.options.resultMaxChars, warn: this.options.warn, previewTool };
      this.#registered.set(names[i], { name: names[i], server, tool: defineMcpTool(names[i], mcpTool, deps) });
    });
    this.#version++;
  }

  /** The tools the model may be offered now: those of servers that are up (the same for every user). */
  list(_user: ToolUser): Array<{ name: string; description: string; selection: 'ranked' }> {
    const up = new Set([...this.#claims.values()].flat());
    return [...this.#registered.values()].filter((r) => up.has(r.name)).map((r) => ({ name: r.name, description: r.tool.description, selection: 'ranked' }));
  }

  call(user: ToolUser, tool: string, args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolResult> {
    const registered = this.#registered.get(tool);
    return registered ? registered.tool.run(user, args, ctx) : Promise.resolve(unknownTool(tool, ctx));
  }

  /**
   * Every MCP tool the agent can execute (those of servers now down included), sorted by name: the
   * order the model sees them in must not depend on which server answered first. Prefixes: `<server>_`
   * of every configured server, the names its tools will have, listed or not yet.
   */
  describe(): ToolSourceDescription {
    if (this.#described?.version === this.#version) return this.#described;
    const tools = [...this.#registered.values()].sort((a, b) => a.name.localeCompare(b.name)).map(({ tool: t }) => ({
      name: t.name, description: t.description, schema: t.schema, defaultAction: t.defaultAction, selection: 'ranked' as const,
    }));
    this.#described = { kind: MCP_KIND, tools, prefixes: this.#connections.map((c) => `${sanitizeName(c.config.name)}_`), version: this.#version };
    return this.#described;
  }

  status(): McpSourceStatus {
    const servers = this.#connections.map((c) => ({
      name: c.config.name,
      transport: c.config.transport,
      status: c.health,
      tools: c.health === 'up' ? c.tools.length : 0,
      last_error: c.lastError,
      next_retry_at: c.nextRetryAt?.toISOString() ?? null,
    }));
    const all = [...servers, ...this.#invalid];
    const tools = this.describe().tools.map((t) => t.name).sort();
    // A down server leaves its tools out and is retried; it does not make the gateway unready.
    const readiness = {
      ready: all.every((s) => s.status === 'up') && !this.#fileError,
      file: this.options.file ?? null,
      file_error: this.#fileError,
      servers: all.map((s) => ({ name: s.name, transport: s.transport, alive: s.status === 'up', status: s.status, tools: s.tools, last_error: s.last_error })),
      tools,
    };
    return { kind: MCP_KIND, tools, readiness, file: this.options.file ?? null, file_error: this.#fileError, servers: all };
  }

  async close(): Promise<void> {
    await Promise.all(this.#connections.map((c) => c.close()));
  }
}
