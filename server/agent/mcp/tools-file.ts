/**
 * The tools file (`TOOLS_FILE`, YAML or JSON): the MCP servers whose tools the agent gets. Read and
 * validated with zod, one server entry at a time, so a bad entry marks only that server down and a
 * bad file marks the file down; neither ever stops the gateway from starting.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

const name = z.string().min(1).max(64).describe('The server name; tools appear to the model as <name>_<tool>');

const StdioServer = z
  .object({
    name,
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
  })
  .strict();

/**
 * What an HTTP server learns of who calls (issue 30): nothing by default; `"token"` sends a token
 * minted per call for that server alone (server/auth/mcp-token.ts). Never Airlock's own tokens.
 */
const Identity = z.literal('token').describe('identity: "token" sends Authorization: Bearer <a per-call mcp+jwt token>');

const HttpServer = z
  .object({
    name,
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()).default({}),
    identity: Identity.optional(),
  })
  .strict();

/** The keys that once sent the service token and the user's JWT to any tool server. */
const RETIRED_IDENTITY_KEYS = ['service_header', 'user_header'];

/** The one-line reason an entry with the retired keys is marked down. */
export const RETIRED_IDENTITY_REASON =
  'service_header/user_header are no longer supported: tool servers get no Airlock credentials (issue 30); use identity: "token" for a per-call token';

/** Whether an entry still names the retired keys, under `identity` or at its top. Pure. */
export function usesRetiredIdentityKeys(raw: object): boolean {
  const identity = (raw as { identity?: unknown }).identity;
  const holders = [raw, identity && typeof identity === 'object' ? identity : {}];
  return holders.some((h) => RETIRED_IDENTITY_KEYS.some((k) => k in h));
}

export type StdioServerConfig = z.infer<typeof StdioServer> & { transport: 'stdio' };
export type HttpServerConfig = z.infer<typeof HttpServer> & { transport: 'http' };
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** One `servers` entry: a valid server, or the reason it is not (shown as a down server). */
export type ServerEntry = { ok: true; server: McpServerConfig } | { ok: false; name: string; error: string; transport?: 'stdio' | 'http' };

export interface ToolsFile {
  entries: ServerEntry[];
  /** Set when the file as a whole could not be used (missing, unparsable, no `servers` list). */
  error?: string;
}

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(entry)'}: ${i.message}`).join('; ');
}

/** Validates one entry: `command` makes it stdio, `url` makes it streamable HTTP. */
export function parseServerEntry(raw: unknown, index: number): ServerEntry {
  const label = raw && typeof raw === 'object' && typeof (raw as { name?: unknown }).name === 'string' ? (raw as { name: string }).name : `#${index + 1}`;
  if (!raw || typeof raw !== 'object') return { ok: false, name: label, error: 'a server entry must be an object' };
  const isHttp = 'url' in raw;
  if (!isHttp && !('command' in raw)) return { ok: false, name: label, error: 'a server needs either command (stdio) or url (streamable HTTP)' };
  const transport = isHttp ? 'http' : 'stdio';
  if (usesRetiredIdentityKeys(raw)) return { ok: false, name: label, error: RETIRED_IDENTITY_REASON, transport };
  const parsed = isHttp ? HttpServer.safeParse(raw) : StdioServer.safeParse(raw);
  if (!parsed.success) return { ok: false, name: label, error: issues(parsed.error), transport };
  return { ok: true, server: { ...parsed.data, transport } as McpServerConfig };
}

/** Parses the text of a tools file (YAML is a superset of JSON, so one parser reads both). */
export function parseToolsFile(text: string): ToolsFile {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    return { entries: [], error: `the tools file is not valid YAML or JSON: ${(error as Error).message.split('\n')[0]}` };
  }
  const servers = doc && typeof doc === 'object' ? (doc as { servers?: unknown }).servers : undefined;
  if (!Array.isArray(servers)) return { entries: [], error: 'the tools file needs a top-level "servers" list' };
  return { entries: servers.map(parseServerEntry) };
}

/** Reads and parses the tools file; a missing or unreadable file is an error entry, never a throw. */
export async function loadToolsFile(path: string): Promise<ToolsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return { entries: [], error: `cannot read the tools file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  return parseToolsFile(text);
}
