/**
 * The gateway's MCP tool source (TOOLS_FILE): started before the gateway listens (a bad file or a
 * dead server is reported, never fatal), its audit rows written to audit_log, its servers listed at
 * `GET /api/agent/tools/servers` (readiness: up/down, tool count, last error), closed on shutdown.
 * A tool server gets no Airlock credential: at most, when its entry says `identity: "token"`, a
 * token minted per call for it alone, signed with the api's key (issue 30).
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { ALL_TOOLS, McpToolSource } from '../index.ts';
import { keyCipherFor, keyStoreFor, signMcpToken } from '../../auth/index.ts';
import type { Config } from '../../config.ts';
import { insertAudit } from '../../db/audit.ts';
import type { Pool } from '../../db/index.ts';

export async function startMcpTools(app: FastifyInstance, deps: { config: Config; pool: Pool }): Promise<McpToolSource> {
  const { config, pool } = deps;
  // The api's sealed key must open here, as for recovery's tokens (gateway.ts).
  const keys = keyStoreFor(pool, keyCipherFor(config));
  const source = new McpToolSource({
    file: config.tools.file,
    timeoutMs: config.tools.mcpTimeoutMs,
    resultMaxChars: config.tools.resultMaxChars,
    reservedNames: config.tools.builtin ? ALL_TOOLS.map((t) => t.name) : [],
    mintToken: (call) => signMcpToken(keys, { issuer: config.jwt.issuer, ...call }),
    audit: (entry) => insertAudit(pool, entry),
    warn: (message, error) => app.log.warn({ err: error }, message),
  });
  await source.start();
  for (const s of source.status().servers) {
    if (s.status !== 'up') app.log.warn({ server: s.name, reason: s.last_error }, 'MCP server is down (retrying)');
  }
  if (source.status().file_error) app.log.warn({ reason: source.status().file_error }, 'the tools file is unusable');
  app.addHook('onClose', () => source.close());

  // Names and health only: no token, header value or argument ever appears here.
  app.get('/api/agent/tools/servers', async () => source.status());
  return source;
}
