/**
 * Approvals (seed 000 "Headless Approval Round Trip"): list, read, approve, deny with {reason}.
 * Deciding resumes the paused run with no client attached (approval-service.ts).
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { listApprovalRecords } from '../db/approval-records.ts';
import type { ApprovalStatus } from '../db/approvals.ts';
import { AirlockError } from '../errors.ts';
import { v1Caller } from './identity.ts';
import type { V1Deps } from './deps.ts';
import { listScope } from './runs-routes.ts';
import { DecisionBody, IdParams, ListQuery, parseWith } from './schemas.ts';
import { approvalWire } from './serialize.ts';

const STATUSES: ApprovalStatus[] = ['pending', 'approved', 'denied', 'expired'];

export const approvalRoutes: FastifyPluginAsync<V1Deps> = async (app, deps) => {
  app.get('/approvals', async (request) => {
    const caller = v1Caller(request);
    const query = parseWith(ListQuery, request.query);
    if (query.status !== undefined && !STATUSES.includes(query.status as ApprovalStatus)) {
      throw new AirlockError('VALIDATION_ERROR', `status must be one of ${STATUSES.join(', ')}.`);
    }
    const rows = await listApprovalRecords(deps.pool, { ...listScope(caller), status: (query.status as ApprovalStatus | undefined) ?? null, limit: query.limit });
    return { approvals: rows.map(approvalWire), count: rows.length };
  });

  app.get('/approvals/:id', async (request) => {
    const { id } = parseWith(IdParams, request.params);
    return approvalWire(await deps.approvals.visible(v1Caller(request), id));
  });

  for (const decision of ['approve', 'deny'] as const) {
    app.post(`/approvals/:id/${decision}`, async (request) => {
      const { id } = parseWith(IdParams, request.params);
      const body = parseWith(DecisionBody, request.body);
      return approvalWire(await deps.approvals.decide(v1Caller(request), id, decision, body.reason ?? null));
    });
  }
};
