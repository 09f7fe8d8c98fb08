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

/** Which headers carry the two identities to an HTTP server; null sends none. */
const Identity = z
  .object({
    service_header: z.string().min(1).nullable().default('Authorization'),
    user_header: z.string().min(1).nullable().default('X-User-JWT'),
  })
  .strict();

const HttpServer = z
  .object({
    name,
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()).default({}),
    identity: Identity.default({ service_header: 'Authorization', user_header: 'X-User-JWT' }),
  })
  .strict();

export type StdioServerConfig = z.infer<typeof StdioServer> & { transport: 'stdio' };
export type HttpServerConfig = z.infer<typeof HttpServer> & { transport: 'http' };
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** One `servers` entry: a valid server, or the reason it is not (shown as a down server). */
export type ServerEntry = { ok: true; server: McpServerConfig } | { ok: false; name: string; error: string };

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
  const parsed = isHttp ? HttpServer.safeParse(raw) : StdioServer.safeParse(raw);
  if (!parsed.success) return { ok: false, name: label, error: issues(parsed.error) };
  return { ok: true, server: { ...parsed.data, transport: isHttp ? 'http' : 'stdio' } as McpServerConfig };
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
