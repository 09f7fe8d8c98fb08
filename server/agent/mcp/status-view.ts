/**
 * What `GET /api/agent/tools/servers` shows, and to whom (issue 30, finding 15): the route is the
 * admin's (it names every server and its last error), and it never shows an absolute path: the
 * tools file by its name only, and paths inside a reason (a stdio command, a cwd) cut to their
 * last segment. Pure.
 * @module
 */
import { basename } from 'node:path';
import type { McpServersStatus } from './source.ts';

/** The route's body: the tools file, and every server of every kind (MCP, OpenAPI) with its last error. */
export type ServersView<S extends { last_error: string | null }> = Omit<McpServersStatus, 'servers'> & { servers: S[] };

/** An absolute path at the start of the text or after a space, quote, parenthesis, '=' or ':' + space. */
const ABSOLUTE_PATH = /(^|[\s'"(=])(\/[^\s'"()]+)/g;

/** `spawn /opt/x/bin/server ENOENT` -> `spawn …/server ENOENT`; URLs (`http://h/p`) are left alone. */
export function withoutPaths(text: string): string {
  return text.replace(ABSOLUTE_PATH, (_m, before: string, path: string) => `${before}…/${basename(path)}`);
}

/** The status as the route shows it. */
export function statusView<S extends { last_error: string | null }>(status: ServersView<S>): ServersView<S> {
  return {
    file: status.file === null ? null : basename(status.file),
    file_error: status.file_error === null ? null : withoutPaths(status.file_error),
    servers: status.servers.map((s) => ({ ...s, last_error: s.last_error === null ? null : withoutPaths(s.last_error) })),
  };
}

/** Only the admin reads it: 401 without a valid user token, 403 for any other role. */
export function statusAccess(user: { role: string } | null): 'ok' | 'unauthorized' | 'forbidden' {
  if (!user) return 'unauthorized';
  return user.role === 'admin' ? 'ok' : 'forbidden';
}
