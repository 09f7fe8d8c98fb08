/**
 * One MCP server: its client connection (stdio or streamable HTTP, through the SDK), its tools, and
 * its health. A failed connect or a lost connection marks it down with the reason and retries with
 * backoff; the source leaves a down server's tools out of what the model sees.
 * @module
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { callHeaders, identityFetch, withCallHeaders, type McpTokenMinter } from './identity.ts';
import { forgetChild, trackChild } from './children.ts';
import type { McpCallResult } from './result.ts';
import { tooDeepSchema } from './schema-depth.ts';
import type { McpServerConfig } from './tools-file.ts';

export type ServerHealth = 'connecting' | 'up' | 'down';

export interface ConnectionDeps {
  timeoutMs: number;
  /** Mints the per-call token of `identity: "token"` servers; nothing else is ever sent as identity. */
  mintToken?: McpTokenMinter;
  /** Called whenever health or tools change. */
  onChange: () => void;
  /** Delay before retry number `attempt` (0-based). Default `retryDelayMs`. */
  backoff?: (attempt: number) => number;
}

/** Exponential backoff: 1 s, 2 s, 4 s … capped at 30 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, attempt));
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0].slice(0, 300);

export class McpConnection {
  health: ServerHealth = 'connecting';
  tools: Tool[] = [];
  lastError: string | null = null;
  nextRetryAt: Date | null = null;
  #client: Client | null = null;
  /** The client of a connect attempt still under way: closed by `close()` (a hung server never ends it). */
  #pending: Client | null = null;
  #attempt = 0;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;
  /** Set when the server must not be retried (e.g. a name collision, a config error). */
  #permanent = false;

  constructor(
    readonly config: McpServerConfig,
    private readonly deps: ConnectionDeps,
  ) {}

  #transport(): Transport {
    const c = this.config;
    if (c.transport === 'stdio') {
      // The child gets PATH and HOME (the SDK's safe default set) plus the file's env; its stderr is
      // discarded so a chatty server cannot fill our logs with what may be secrets.
      const transport = new StdioClientTransport({ command: c.command, args: c.args, env: c.env ? { ...inheritedEnv(), ...c.env } : undefined, cwd: c.cwd, stderr: 'ignore' });
      trackChild(transport);
      const close = transport.close.bind(transport);
      transport.close = () => close().finally(() => forgetChild(transport));
      return transport;
    }
    return new StreamableHTTPClientTransport(new URL(c.url), {
      fetch: identityFetch({ staticHeaders: c.headers }),
      reconnectionOptions: { initialReconnectionDelay: 500, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 },
    });
  }

  /** One connect attempt: initialize, list every tool (all pages). Never throws. */
  async connect(): Promise<void> {
    if (this.#closed || this.#permanent) return;
    this.#clearTimer();
    // A server that failed stays "down" with its reason while it retries: readiness must not flicker
    // to "connecting" on every attempt. Only the first attempt reports "connecting".
    if (this.health !== 'down') this.health = 'connecting';
    const client = new Client({ name: 'airlock-gateway', version: '1.0.0' });
    this.#pending = client;
    try {
      await client.connect(this.#transport(), { timeout: this.deps.timeoutMs });
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.deps.timeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      // Refused before anything walks it recursively (a 3,000-deep schema overflowed the stack).
      const tooDeep = tooDeepSchema(tools);
      if (tooDeep) throw new Error(tooDeep);
      if (this.#closed) return void (await client.close().catch(() => {}));
      client.onclose = () => this.#lost(client, 'the connection closed');
      // A broken stream surfaces as an error, not a close: ping to tell a hiccup from a dead server.
      client.onerror = () => void this.#probe(client);
      this.#client = client;
      this.tools = tools;
      this.health = 'up';
      this.lastError = null;
      this.nextRetryAt = null;
      this.#attempt = 0;
    } catch (error) {
      await client.close().catch(() => {});
      if (this.#closed) return;
      this.markDown(`connect failed: ${errorText(error)}`);
      return;
    } finally {
      if (this.#pending === client) this.#pending = null;
    }
    // Connects run in the background: a throw here would be an unhandled rejection.
    try {
      this.deps.onChange();
    } catch (error) {
      this.markDown(`its tools could not be registered: ${errorText(error)}`);
    }
  }

  async #probe(client: Client): Promise<void> {
    if (this.#client !== client) return;
    try {
      await client.ping({ timeout: 3000 });
    } catch {
      this.#lost(client, 'the server stopped answering');
      await client.close().catch(() => {});
    }
  }

  #lost(client: Client, reason: string): void {
    if (this.#client !== client || this.#closed) return;
    this.#client = null;
    this.markDown(reason);
  }

  /** Marks the server down with a reason and (unless permanent) schedules a reconnect with backoff. */
  markDown(reason: string, options: { permanent?: boolean } = {}): void {
    const client = this.#client;
    this.#client = null;
    if (client) void client.close().catch(() => {});
    this.health = 'down';
    this.lastError = reason;
    this.#permanent ||= options.permanent === true;
    this.#clearTimer();
    if (!this.#closed && !this.#permanent) {
      const delay = (this.deps.backoff ?? retryDelayMs)(this.#attempt++);
      this.nextRetryAt = new Date(Date.now() + delay);
      this.#timer = setTimeout(() => void this.connect(), delay);
      this.#timer.unref();
    } else this.nextRetryAt = null;
    this.deps.onChange();
  }

  /**
   * Calls one tool for the given user (who reaches the server only as a minted token, and only when
   * its entry opted in); a lost connection rejects and marks the server down.
   */
  /** `traceparent`: the tool call's span (server/telemetry), sent on an HTTP server's requests of this call. */
  async call(name: string, args: Record<string, unknown>, options: { userId: string | null; signal?: AbortSignal; traceparent?: string | null }): Promise<McpCallResult> {
    const client = this.#client;
    if (!client || this.health !== 'up') throw new Error(`the MCP server "${this.config.name}" is down${this.lastError ? ` (${this.lastError})` : ''}`);
    // Minted before the call: failing to sign says nothing about the server's health.
    const identity = await callHeaders(this.config, { userId: options.userId, tool: name }, this.deps.mintToken);
    const headers = options.traceparent ? { ...identity, traceparent: options.traceparent } : identity;
    try {
      return (await withCallHeaders(headers, () =>
        client.callTool({ name, arguments: args }, undefined, { signal: options.signal, timeout: this.deps.timeoutMs }),
      )) as McpCallResult;
    } catch (error) {
      if (!options.signal?.aborted) void this.#probe(client);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#clearTimer();
    const client = this.#client;
    const pending = this.#pending;
    this.#client = null;
    this.#pending = null;
    await Promise.all([client?.close().catch(() => {}), pending?.close().catch(() => {})]);
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}

/** PATH and HOME etc.: what the SDK passes a stdio server when no env is given. */
function inheritedEnv(): Record<string, string> {
  const keys = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];
  return Object.fromEntries(keys.flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
}
