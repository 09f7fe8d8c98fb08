/**
 * GET /api/admin/users and PATCH /api/admin/users/{id} (issue 39): an admin sees every user and
 * changes a role or switches a person off and on. The rules (and the audit row naming the admin)
 * are server/identity's, the same the command line uses.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { AirlockError } from '../../errors.ts';
import { listUsers, setDisabled, setRole, type ManagedUser } from '../../identity/index.ts';
import { parseInput } from '../../http/validate.ts';
import type { ApiContext } from '../context.ts';
import { requestUser, requireUser } from '../identity.ts';

const UserId = z.object({ id: z.uuid() });
const PatchBody = z
  .object({ role: z.enum(['viewer', 'operator', 'admin']).optional(), disabled: z.boolean().optional() })
  .strict()
  .refine((b) => b.role !== undefined || b.disabled !== undefined, 'Give role, disabled, or both.');

export const userJson = (u: ManagedUser) => ({
  id: u.id,
  username: u.username,
  display_name: u.display_name,
  email: u.email,
  role: u.role,
  role_from_claims: u.role_from_claims,
  tenant: u.tenant,
  source: u.source,
  issuer: u.issuer,
  last_sign_in_at: u.last_sign_in_at,
  disabled_at: u.disabled_at,
});

export const adminUserRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.addHook('onRequest', requireUser(ctx));
  app.addHook('preHandler', async (request) => {
    const user = requestUser(request);
    if (user.role !== 'admin') throw new AirlockError('FORBIDDEN', `Managing users is for admins; your role is ${user.role}.`);
  });

  app.get('/', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { users: (await listUsers(ctx.pool)).map(userJson) };
  });

  app.patch('/:id', async (request) => {
    const { id } = parseInput(UserId, request.params, 'params');
    const body = parseInput(PatchBody, request.body, 'body');
    const me = requestUser(request);
    const actor = { kind: 'user' as const, userId: me.userId, username: me.username, role: me.role };
    let user: ManagedUser | undefined;
    if (body.role !== undefined) user = await setRole(ctx.pool, actor, { id }, body.role);
    if (body.disabled !== undefined) user = await setDisabled(ctx.pool, actor, { id }, body.disabled);
    return { user: userJson(user!) };
  });
};
