/**
 * The `openapi` tool source (issue 41): each `openapi:` entry of the tools file is a document
 * whose operations become tools (operations.ts), called over HTTP with the entry's identity
 * (tool.ts). Entries load in the background, in file order, so the start never waits on a remote
 * document; one that cannot be used (unreadable, Swagger 2.0, no usable base URL, a reserved
 * audience, a missing `bearer_env` variable) is down with the reason, and a bad operation is down
 * alone (`down_operations`), both shown at `GET /api/agent/tools/servers`. An unreachable API is
 * not probed at start: a failed call is that call's tool_error and sets `last_error`.
 * Operations are `ranked`: they share the one top-N (MCP_TOOLS_TOP_N) with the MCP tools.
 * @module
 */
import { reservedAudience } from '../../auth/backend-token.ts';
import { unknownTool } from '../tools/define.ts';
import type { ToolCallContext, ToolResult, ToolSource, ToolSourceDescription, ToolSourceStatus, ToolUser } from '../tool-source.ts';
import type { McpAuditSink } from '../mcp/audit.ts';
import { sanitizeName } from '../mcp/names.ts';
import type { OpenApiEntry, OpenApiServerConfig } from '../mcp/tools-file.ts';
import { insecureUrl, loadOpenApiDocument } from './document.ts';
import { documentOperations, type DownOperation } from './operations.ts';
import { defineOpenApiTool, type IdentityCall, type OpenApiTool } from './tool.ts';

export const OPENAPI_KIND = 'openapi';

/** Mints the two JWTs of one `dual_jwt` call (server/auth/backend-token.ts). */
export type BackendTokenMinter = (call: IdentityCall & { audience: string }) => Promise<{ service: string; user: string }>;

export interface OpenApiSourceOptions {
  entries: OpenApiEntry[];
  /** The tools file's folder. */
  dir: string;
  timeoutMs: number;
  resultMaxChars: number;
  /** Names other sources hold (the built-in tools). */
  reservedNames: Iterable<string>;
  mintTokens?: BackendTokenMinter;
  audit?: McpAuditSink;
  warn?: (message: string, error: unknown) => void;
  env?: Record<string, string | undefined>;
}

/** One entry as `GET /api/agent/tools/servers` shows it. */
export interface OpenApiServerStatus {
  name: string;
  transport: 'openapi';
  status: 'connecting' | 'up' | 'down';
  tools: number;
  last_error: string | null;
  next_retry_at: null;
  down_operations: DownOperation[];
}

export class OpenApiToolSource implements ToolSource {
  #servers: OpenApiServerStatus[];
  #tools = new Map<string, OpenApiTool>();
  #version = 0;
  #described: ToolSourceDescription | null = null;
  #loaded: Promise<void> = Promise.resolve();

  constructor(private readonly options: OpenApiSourceOptions) {
    this.#servers = options.entries.map((e) => ({
      name: e.ok ? e.server.name : e.name, transport: 'openapi', status: e.ok ? 'connecting' : 'down', tools: 0,
      last_error: e.ok ? null : `invalid server entry: ${e.error}`, next_retry_at: null, down_operations: [],
    }));
  }

  /** Starts loading every entry in the background, in file order; never waits on one. */
  start(): void {
    this.#loaded = this.options.entries.reduce<Promise<void>>((chain, entry, i) => chain.then(() => (entry.ok ? this.#load(entry.server, this.#servers[i]) : undefined)), Promise.resolve());
  }

  /** Resolves when every entry has loaded or failed (tests and logs wait on it; the start never does). */
  settled(): Promise<void> {
    return this.#loaded;
  }

  async #load(entry: OpenApiServerConfig, status: OpenApiServerStatus): Promise<void> {
    const down = (reason: string) => Object.assign(status, { status: 'down', last_error: reason });
    try {
      const identity = this.#identity(entry);
      if (typeof identity === 'string') return void down(identity);
      const timeoutMs = entry.timeout_ms ?? this.options.timeoutMs;
      const loaded = await loadOpenApiDocument(entry.openapi, this.options.dir, timeoutMs);
      if ('error' in loaded) return void down(loaded.error);
      const base = this.#base(entry, loaded.doc.servers?.[0]?.url);
      if (typeof base === 'string') return void down(base);
      const audience = entry.audience ?? base.origin;
      const refused = entry.identity === 'dual_jwt' ? reservedAudience(audience) : null;
      if (refused) return void down(refused);
      const taken = new Set([...this.options.reservedNames, ...this.#tools.keys()]);
      const { tools, down: downOps } = documentOperations(entry.name, loaded.doc, { filter: entry.operations, taken });
      for (const op of tools) {
        const tool = defineOpenApiTool(op, {
          server: entry.name, base, timeoutMs, resultMaxChars: this.options.resultMaxChars, audit: this.options.audit, warn: this.options.warn,
          identity: (call) => identity(call, audience),
          onError: (message) => (status.last_error = message),
        });
        this.#tools.set(op.name, tool);
      }
      Object.assign(status, { status: 'up', tools: tools.length, down_operations: downOps });
      this.#version++;
    } catch (error) {
      down(`cannot load the OpenAPI source: ${(error as Error).message}`);
    }
  }

  /** The entry's identity headers, or why it cannot have them. */
  #identity(entry: OpenApiServerConfig): ((call: IdentityCall, audience: string) => Promise<Record<string, string>>) | string {
    const { identity } = entry;
    if (identity === 'none') return async () => ({});
    if (typeof identity === 'object') {
      const token = (this.options.env ?? process.env)[identity.bearer_env];
      if (!token) return `the environment variable ${identity.bearer_env} (bearer_env) is not set`;
      return async () => ({ authorization: `Bearer ${token}` });
    }
    const mint = this.options.mintTokens;
    if (!mint) return 'identity dual_jwt needs the gateway to mint tokens, and it cannot here';
    return async (call, audience) => {
      if (!call.user.id) throw new Error(`the API "${entry.name}" wants the user's token, and this call has no user`);
      const tokens = await mint({ ...call, audience });
      return { authorization: `Bearer ${tokens.service}`, 'x-user-jwt': tokens.user };
    };
  }

  /** The base URL: the entry's, else the document's servers[0] when absolute and secure. */
  #base(entry: OpenApiServerConfig, fromDoc: string | undefined): URL | string {
    if (entry.base_url) return new URL(entry.base_url);
    if (!fromDoc || !URL.canParse(fromDoc)) return 'no base URL: set base_url (the document has no absolute servers[0].url)';
    const url = new URL(fromDoc);
    return insecureUrl(url) ?? url;
  }

  list(_user: ToolUser): Array<{ name: string; description: string; selection: 'ranked' }> {
    return this.describe().tools.map((t) => ({ name: t.name, description: t.description, selection: 'ranked' }));
  }

  call(user: ToolUser, tool: string, args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolResult> {
    const found = this.#tools.get(tool);
    return found ? found.run(user, args, ctx) : Promise.resolve(unknownTool(tool, ctx));
  }

  describe(): ToolSourceDescription {
    if (this.#described?.version === this.#version) return this.#described;
    const tools = [...this.#tools.values()].sort((a, b) => a.name.localeCompare(b.name)).map((t) => ({
      name: t.name, description: t.description, schema: t.schema, defaultAction: t.defaultAction, selection: 'ranked' as const,
    }));
    this.#described = { kind: OPENAPI_KIND, tools, prefixes: this.#servers.map((s) => `${sanitizeName(s.name)}_`), version: this.#version };
    return this.#described;
  }

  status(): ToolSourceStatus & { servers: OpenApiServerStatus[] } {
    const tools = this.describe().tools.map((t) => t.name);
    const servers = this.#servers.map((s) => ({ ...s, down_operations: [...s.down_operations] }));
    const readiness = { ready: servers.every((s) => s.status === 'up'), servers: servers.map((s) => ({ name: s.name, alive: s.status === 'up', status: s.status, tools: s.tools, last_error: s.last_error })), tools };
    return { kind: OPENAPI_KIND, tools, readiness, servers };
  }
}
