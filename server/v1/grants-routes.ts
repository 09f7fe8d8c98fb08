/**
 * Standing grants in v1 (issue 27 item 2): `GET /grants` lists the caller's (made by them, for them,
 * their tenant's), `POST /grants` makes one ({tool, match, ttl_s, scope}), `DELETE /grants/{id}`
 * revokes one. Making one needs the right to decide that tool, under the rule a call with the
 * match's values falls under, and at most that rule's `max_grant_s` (approvals/grants.ts); an empty
 * match only under a rule with `when` (issue 36). The grant keeps that rule's hash: at each call it
 * covers the call only when the policy decides it by the same rule, still grantable (policy/rule.ts
 * grantLimitS: never with several approvers, a step-up or grantable: false).
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { createGrant, listGrants, revokeGrant, type Grant } from '../db/grants.ts';
import { AirlockError } from '../errors.ts';
import { grantApprovers, directGrantRefusal } from '../approvals/grants.ts';
import { MAX_GRANT_S, ruleHash } from '../policy/index.ts';
import type { V1Deps } from './deps.ts';
import { v1Caller } from './identity.ts';
import { IdParams, parseWith } from './schemas.ts';

const GrantBody = z.strictObject({
  /** A built-in or MCP tool's name (MCP tools come and go, so any well-formed name is taken). */
  tool: z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/),
  /** {argument: exact value}; empty only under a rule with `when` (issue 36: refused otherwise). */
  match: z.record(z.string().min(1).max(128), z.unknown()).default({}),
  ttl_s: z.number().int().positive().max(MAX_GRANT_S),
  scope: z.enum(['user', 'tenant']).default('user'),
});

const grantWire = (g: Grant & { createdByName: string }) => ({
  id: g.id, tool: g.tool, match: g.match, scope: g.scope, created_by: g.createdByName, for_user: g.scopeUserName ?? null,
  expires_at: g.expiresAt.toISOString(), revoked_at: g.revokedAt?.toISOString() ?? null, uses: g.uses,
});

export const grantRoutes: FastifyPluginAsync<V1Deps> = async (app, deps) => {
  app.get('/grants', async (request) => {
    const caller = v1Caller(request);
    return { grants: (await listGrants(deps.pool, caller)).map(grantWire) };
  });

  app.post('/grants', async (request, reply) => {
    const caller = v1Caller(request);
    const body = parseWith(GrantBody, request.body);
    // The right to decide that tool, and the rule's grant terms (the match's values choose the rule).
    if (!deps.decide) throw new AirlockError('SERVICE_UNAVAILABLE', 'Grants cannot be made here.');
    const decision = deps.decide({ tenant: caller.tenant, username: caller.username }, body.tool, body.match);
    const refusal = directGrantRefusal(decision, body, { id: caller.userId, username: caller.username, role: caller.role, tenant: caller.tenant });
    if (refusal) throw new AirlockError(refusal.code, refusal.message, refusal.details ? { details: refusal.details } : undefined);
    // The grant keeps that rule (issue 36): it covers only calls the same rule decides.
    const grant = await createGrant(deps.pool, {
      tool: body.tool, match: body.match, createdBy: caller.userId,
      scopeUser: body.scope === 'user' ? caller.userId : null, scopeTenant: body.scope === 'tenant' ? caller.tenant : null,
      expiresAt: new Date(Date.now() + body.ttl_s * 1000), ruleHash: ruleHash(decision), approvers: grantApprovers(decision.rule),
    });
    return reply.code(201).send(grantWire(grant));
  });

  app.delete('/grants/:id', async (request) => {
    const caller = v1Caller(request);
    const { id } = parseWith(IdParams, request.params);
    const revoked = await revokeGrant(deps.pool, { userId: caller.userId, tenant: caller.tenant, admin: caller.role === 'admin' }, id, new Date());
    if (!revoked) throw new AirlockError('NOT_FOUND', 'No live grant of yours has this id.');
    return grantWire(revoked);
  });
};
