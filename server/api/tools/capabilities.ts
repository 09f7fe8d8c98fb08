/** show_capabilities: what this user may do, from the RBAC table. */
import type { FastifyPluginAsync } from 'fastify';
import { permissionsForRole, roleAllows } from '../../auth/index.ts';
import type { ApiContext } from '../context.ts';
import { requestUser } from '../identity.ts';
import { TOOLS } from '../../operations/index.ts';
import { toolRoute } from './route-config.ts';

export const capabilityTools: FastifyPluginAsync<{ ctx: ApiContext }> = async (app) => {
  app.get('/capabilities', toolRoute('show_capabilities'), async (request) => {
    const user = requestUser(request);
    return {
      user: { id: user.userId, username: user.username, role: user.role },
      permissions: permissionsForRole(user.role),
      tools: TOOLS.map((t) => ({
        name: t.name,
        allowed: t.permission === null || roleAllows({ role: user.role, permission: t.permission }),
        description: t.description,
      })),
    };
  });
};
