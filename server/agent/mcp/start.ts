/**
 * The gateway's MCP tool source (TOOLS_FILE): its servers connect in the background, so the start
 * never waits on one (a bad file, a dead or hung server is reported, never fatal), its audit rows written to audit_log, its servers listed at
 * `GET /api/agent/tools/servers` (the admin's: up/down, tool count, last error, no absolute path), closed on shutdown.
 * A tool server gets no Airlock credential: at most, when its entry says `identity: "token"`, a
 * token minted per call for it alone, signed with the api's key (issue 30).
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { McpToolSource } from './source.ts';
import { bearerToken, isAuthError, keyCipherFor, keyStoreFor, signMcpToken, type VerifiedUser } from '../../auth/index.ts';
import type { Config } from '../../config.ts';
import { insertAudit } from '../../db/audit.ts';
import type { Pool } from '../../db/index.ts';
import { AirlockError } from '../../errors.ts';
import { statusAccess, statusView } from './status-view.ts';

export interface McpStartDeps {
  config: Config;
  pool: Pool;
  verifyUser: (token: string) => Promise<VerifiedUser>;
  /** Names other sources hold (the built-in tools): a server listing one is marked down. */
  reservedNames: Iterable<string>;
}

export async function startMcpTools(app: FastifyInstance, deps: McpStartDeps): Promise<McpToolSource> {
  const { config, pool } = deps;
  // The api's sealed key must open here, as for recovery's tokens (gateway.ts).
  const keys = keyStoreFor(pool, keyCipherFor(config));
  const source = new McpToolSource({
    file: config.tools.file,
    timeoutMs: config.tools.mcpTimeoutMs,
    resultMaxChars: config.tools.resultMaxChars,
    reservedNames: deps.reservedNames,
    mintToken: (call) => signMcpToken(keys, { issuer: config.jwt.issuer, ...call }),
    audit: (entry) => insertAudit(pool, entry),
    warn: (message, error) => app.log.warn({ err: error }, message),
  });
  // Before the start: a start that fails later still closes what this one spawned.
  app.addHook('onClose', () => source.close());
  // Never waits on a server: each connects in the background (issue 30); readiness shows it.
  await source.start();
  if (source.status().file_error) app.log.warn({ reason: source.status().file_error }, 'the tools file is unusable');
  void source.settled().then(() => {
    for (const s of source.status().servers) {
      if (s.status !== 'up') app.log.warn({ server: s.name, reason: s.last_error }, 'MCP server is down (retrying)');
    }
  });

  // The admin's only (issue 30): names and health, no absolute path, no token, header value or argument.
  app.get('/api/agent/tools/servers', async (request) => {
    const token = bearerToken(request.headers.authorization);
    const user = token ? await deps.verifyUser(token).catch((error) => (isAuthError(error) ? null : Promise.reject(error))) : null;
    const access = statusAccess(user);
    if (access === 'unauthorized') throw new AirlockError('UNAUTHORIZED', 'A valid user token is required.');
    if (access === 'forbidden') throw new AirlockError('FORBIDDEN', 'The tool servers status is for admins.');
    return statusView(source.status());
  });
  return source;
}
