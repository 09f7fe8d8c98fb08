/**
 * The tools file (`TOOLS_FILE`, YAML or JSON): the MCP servers and OpenAPI documents whose tools the
 * agent gets; one loader for every kind, each source taking its own entries. Read and validated
 * with zod, one server entry at a time, so a bad entry marks only that server down and a bad file
 * marks the file down; neither ever stops the gateway from starting. Server names are unique
 * across kinds: a later entry reusing one is marked down.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { sanitizeName } from './names.ts';

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

/**
 * An OpenAPI document as a tool source (issue 41): checked before the MCP kinds, since an
 * `openapi` entry may have neither `url` nor `command`. A relative path is the tools file's folder's.
 */
const OpenApiServer = z
  .object({
    name,
    openapi: z.string().min(1).describe('a file (relative to the tools file) or an https URL read at start'),
    base_url: z.url({ protocol: /^https?$/ }).optional(),
    identity: z.union([z.literal('dual_jwt'), z.literal('none'), z.object({ bearer_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/) }).strict()]).default('none'),
    audience: z.string().min(1).max(256).optional(),
    timeout_ms: z.number().int().positive().max(600_000).optional(),
    operations: z.union([z.object({ include: z.array(z.string()) }).strict(), z.object({ exclude: z.array(z.string()) }).strict()]).optional(),
  })
  .strict();

export type OpenApiServerConfig = z.infer<typeof OpenApiServer> & { transport: 'openapi' };

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
/** One `openapi` entry, valid or not. */
export type OpenApiEntry = { ok: true; server: OpenApiServerConfig } | { ok: false; name: string; error: string };

export interface ToolsFile {
  /** The MCP servers (stdio, streamable HTTP). */
  entries: ServerEntry[];
  /** The OpenAPI documents, in file order. */
  openapi?: OpenApiEntry[];
  /** The file's folder (relative `openapi:` paths start here). */
  dir?: string;
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
  const entries: ServerEntry[] = [];
  const openapi: OpenApiEntry[] = [];
  const kinds = new Map<string, 'mcp' | 'openapi'>();
  servers.forEach((raw, index) => {
    const isOpenApi = !!raw && typeof raw === 'object' && 'openapi' in raw;
    const entry = isOpenApi ? parseOpenApiEntry(raw, index) : parseServerEntry(raw, index);
    // Names are unique across kinds (MCP servers among themselves keep their own rule, source.ts).
    const key = sanitizeName(entry.ok ? entry.server.name : entry.name);
    const earlier = kinds.get(key);
    if (earlier && (isOpenApi || earlier === 'openapi')) {
      const error = `the server name "${entry.ok ? entry.server.name : entry.name}" is already used by an earlier server`;
      (isOpenApi ? openapi : entries).push({ ok: false, name: entry.ok ? entry.server.name : entry.name, error });
      return;
    }
    if (!earlier) kinds.set(key, isOpenApi ? 'openapi' : 'mcp');
    if (isOpenApi) openapi.push(entry as OpenApiEntry);
    else entries.push(entry as ServerEntry);
  });
  return { entries, openapi };
}

/** Validates one `openapi` entry. */
export function parseOpenApiEntry(raw: object, index: number): OpenApiEntry {
  const label = typeof (raw as { name?: unknown }).name === 'string' ? (raw as { name: string }).name : `#${index + 1}`;
  const parsed = OpenApiServer.safeParse(raw);
  if (!parsed.success) return { ok: false, name: label, error: issues(parsed.error) };
  return { ok: true, server: { ...parsed.data, transport: 'openapi' } };
}

/** Reads and parses the tools file; a missing or unreadable file is an error entry, never a throw. */
export async function loadToolsFile(path: string): Promise<ToolsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return { entries: [], error: `cannot read the tools file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  return { ...parseToolsFile(text), dir: dirname(path) };
}
