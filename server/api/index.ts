/**
 * The api role: /api/auth, /api/tools, /api/assistant, /api/agent, /api/audit, /api/admin/users.
 * At start it makes sure the signing key and (when enabled) the demo users exist, and says how to
 * create the first admin when nobody could sign in.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { ensureDemoUsers } from '../auth/index.ts';
import { firstAdminLine } from '../identity/index.ts';
import { adminUserRoutes } from './admin/users.ts';
import type { Config } from '../config.ts';
import type { Pool } from '../db/index.ts';
import { agentRoutes } from './agent/active.ts';
import { startAuditCheckpoints } from './audit/checkpoints.ts';
import { auditRoutes } from './audit/routes.ts';
import { authRoutes } from './auth/routes.ts';
import { createApiContext } from './context.ts';
import { scheduleHousekeeping } from './housekeeping.ts';
import { conversationRoutes } from './conversations/routes.ts';
import { toolRoutes } from './tools/index.ts';

export interface ApiOptions {
  config: Config;
  pool: Pool;
  /** A webhook endpoint names `audit.checkpoint`: each signed audit head is also sent there. */
  checkpointWebhooks?: boolean;
}

export { TOOLS, type ToolSpec, type ToolName } from './tools/index.ts';

export const apiRoutes: FastifyPluginAsync<ApiOptions> = async (app, { config, pool, checkpointWebhooks }) => {
  const ctx = createApiContext({ config, pool });
  await ctx.keys.signingKey();
  const checkpoints = await startAuditCheckpoints(app, { config, pool, outbox: checkpointWebhooks ?? false });
  // Said at every start: whoever checks the audit keeps this key outside the database (issue 36 item 3).
  process.stdout.write(`Audit checkpoint key (./airlock audit verify --checkpoint-key FILE; GET /api/audit/checkpoint-key): ${JSON.stringify(checkpoints.signer.publicJwk)}\n`);
  // Said at every start, so that nobody runs a shared database with a known admin by accident.
  process.stdout.write(`${config.demoUsersReason}\n`);
  if (config.demoUsers) {
    const demo = await ensureDemoUsers(pool, config);
    for (const line of demo.skipped) app.log.warn(line);
    if (demo.generatedPassword) {
      // Printed once, at the start that created the users; only its hash is stored.
      process.stdout.write(
        `Demo users ${demo.created.join(', ')} created; their password is: ${demo.generatedPassword}\n` +
          '(shown once; set DEMO_PASSWORD to choose it)\n',
      );
    }
  }
  const firstAdmin = await firstAdminLine(pool, { databaseUrl: config.databaseUrl, demoUsers: config.demoUsers, oidcIssuer: config.oidc.issuer });
  if (firstAdmin) process.stdout.write(`${firstAdmin}\n`);
  scheduleHousekeeping(app, pool);
  await app.register(authRoutes, { prefix: '/api/auth', ctx });
  await app.register(toolRoutes, { prefix: '/api/tools', ctx });
  await app.register(conversationRoutes, { prefix: '/api/assistant', ctx });
  await app.register(agentRoutes, { prefix: '/api/agent', ctx });
  await app.register(auditRoutes, { prefix: '/api/audit', ctx, checkpoints });
  await app.register(adminUserRoutes, { prefix: '/api/admin/users', ctx });
};
