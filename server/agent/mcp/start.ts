/**
 * The gateway's MCP tool source (TOOLS_FILE): its servers connect in the background, so the start
 * never waits on one (a bad file, a dead or hung server is reported, never fatal), its audit rows written to audit_log, its servers listed at
 * `GET /api/agent/tools/servers` (registered by tool-sources.ts for every kind), closed on shutdown.
 * A tool server gets no Airlock credential: at most, when its entry says `identity: "token"`, a
 * token minted per call for it alone, signed with the api's key (issue 30).
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { McpToolSource } from './source.ts';
import { signMcpToken, type KeyStore } from '../../auth/index.ts';
import type { Config } from '../../config.ts';
import { insertAudit } from '../../db/audit.ts';
import type { Pool } from '../../db/index.ts';
import type { ToolsFile } from './tools-file.ts';

export interface McpStartDeps {
  config: Config;
  pool: Pool;
  /** Names other sources hold (the built-in tools): a server listing one is marked down. */
  reservedNames: Iterable<string>;
  /** Airlock's signing keys (the api's sealed key must open here, as for recovery's tokens). */
  keys: KeyStore;
  /** The tools file as the one loader read it. */
  loaded?: ToolsFile;
}

export async function startMcpTools(app: FastifyInstance, deps: McpStartDeps): Promise<McpToolSource> {
  const { config, pool, keys } = deps;
  const source = new McpToolSource({
    file: config.tools.file,
    loaded: deps.loaded,
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
  return source;
}
