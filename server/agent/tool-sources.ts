/**
 * The gateway's tool sources, in the order the model sees their tools: the built-in operations
 * tools (none when BUILTIN_TOOLS is off), then the MCP servers and the OpenAPI documents of
 * TOOLS_FILE. The one place that names the kinds; everything downstream (the runtime, the policy
 * and readiness routes) takes the list. The tools file is read once here and split by kind
 * (mcp/tools-file.ts), and `GET /api/agent/tools/servers` gathers every kind's servers (the
 * admin's: up/down, tool count, last error, down operations, no absolute path).
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { bearerToken, isAuthError, keyCipherFor, keyStoreFor, signBackendTokens, type VerifiedUser } from '../auth/index.ts';
import type { Config } from '../config.ts';
import { insertAudit } from '../db/audit.ts';
import type { Pool } from '../db/index.ts';
import { AirlockError } from '../errors.ts';
import { startMcpTools } from './mcp/start.ts';
import { statusAccess, statusView } from './mcp/status-view.ts';
import { loadToolsFile } from './mcp/tools-file.ts';
import { OpenApiToolSource } from './openapi/source.ts';
import type { ToolSource } from './tool-source.ts';
import { ALL_TOOLS } from './tools/index.ts';
import { builtinToolSource } from './tools/source.ts';

export interface ToolSourcesDeps {
  config: Config;
  pool: Pool;
  verifyUser: (token: string) => Promise<VerifiedUser>;
}

export async function startToolSources(app: FastifyInstance, deps: ToolSourcesDeps): Promise<ToolSource[]> {
  const { config, pool } = deps;
  // The api's sealed key must open here, as for recovery's tokens (gateway.ts).
  const keys = keyStoreFor(pool, keyCipherFor(config));
  const loaded = config.tools.file ? await loadToolsFile(config.tools.file) : undefined;
  const builtin = builtinToolSource(deps.config.tools.builtin ? ALL_TOOLS : []);
  const reservedNames = builtin.describe().tools.map((t) => t.name);
  const mcp = await startMcpTools(app, { config, pool, keys, loaded, reservedNames });
  const openapi = new OpenApiToolSource({
    entries: loaded?.openapi ?? [],
    dir: loaded?.dir ?? '.',
    timeoutMs: config.tools.mcpTimeoutMs,
    resultMaxChars: config.tools.resultMaxChars,
    reservedNames,
    mintTokens: (call) => signBackendTokens(keys, { issuer: config.jwt.issuer, clientId: config.service.clientId, ...call }),
    audit: (entry) => insertAudit(pool, entry),
    warn: (message, error) => app.log.warn({ err: error }, message),
  });
  openapi.start();
  void openapi.settled().then(() => {
    for (const s of openapi.status().servers) if (s.status !== 'up') app.log.warn({ server: s.name, reason: s.last_error }, 'OpenAPI source is down');
  });

  // The admin's only (issue 30): names and health, no absolute path, no token, header value or argument.
  app.get('/api/agent/tools/servers', async (request) => {
    const token = bearerToken(request.headers.authorization);
    const user = token ? await deps.verifyUser(token).catch((error) => (isAuthError(error) ? null : Promise.reject(error))) : null;
    const access = statusAccess(user);
    if (access === 'unauthorized') throw new AirlockError('UNAUTHORIZED', 'A valid user token is required.');
    if (access === 'forbidden') throw new AirlockError('FORBIDDEN', 'The tool servers status is for admins.');
    const status = mcp.status();
    return statusView({ file: status.file, file_error: status.file_error, servers: [...status.servers, ...openapi.status().servers] });
  });
  return [builtin, mcp, openapi];
}
