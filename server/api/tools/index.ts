/**
 * /api/tools: the endpoints the agent's tools call, each with a service JWT and the user's JWT,
 * RBAC on the user's role, and an audit row per call.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ApiContext } from '../context.ts';
import { capabilityTools } from './capabilities.ts';
import { dashboardTools } from './dashboards.ts';
import { deploymentTools } from './deployments.ts';
import { registerToolHooks } from './hooks.ts';
import { maintenanceTools } from './maintenance.ts';
import { statusTools } from './status.ts';
import { taskTools } from './tasks.ts';

export { TOOLS, type ToolSpec, type ToolName } from '../../operations/index.ts';

export const toolRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  registerToolHooks(app, ctx);
  for (const plugin of [capabilityTools, dashboardTools, maintenanceTools, deploymentTools, statusTools, taskTools]) {
    await app.register(plugin, { ctx });
  }
};
