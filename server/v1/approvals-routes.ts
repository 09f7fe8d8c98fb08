/**
 * Approvals (seed 000 "Headless Approval Round Trip"): list, read, approve, deny with {reason}, and
 * the signed receipt of a decided one (issue 28).
 * Deciding resumes the paused run with no client attached (approvals/service.ts).
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { getReceipt } from '../db/approval-receipts.ts';
import { listApprovalRecords } from '../db/approval-records.ts';
import type { ApprovalStatus } from '../db/approvals.ts';
import { AirlockError } from '../errors.ts';
import type { StepUpAssertion } from '../approvals/passkeys.ts';
import { v1Caller } from './identity.ts';
import { requestRelyingParty } from './passkeys-routes.ts';
import type { V1Deps } from './deps.ts';
import { listScope } from './runs-routes.ts';
import { ApprovalsQuery, ApproveBody, DecisionBody, IdParams, parseWith } from './schemas.ts';
import type { GrantRequest } from '../../src/lib/wire/index.ts';
import { approvalWire } from './serialize.ts';
import { sessionFilter } from './sessions.ts';

const STATUSES: ApprovalStatus[] = ['pending', 'approved', 'denied', 'expired'];

export const approvalRoutes: FastifyPluginAsync<V1Deps> = async (app, deps) => {
  app.get('/approvals', async (request) => {
    const caller = v1Caller(request);
    const query = parseWith(ApprovalsQuery, request.query);
    if (query.status !== undefined && !STATUSES.includes(query.status as ApprovalStatus)) {
      throw new AirlockError('VALIDATION_ERROR', `status must be one of ${STATUSES.join(', ')}.`);
    }
    // session_id as the other v1 routes take it (issue 24): a conversation id or the caller's alias.
    const conversationId = query.session_id === undefined ? null : await sessionFilter(deps.pool, caller.userId, query.session_id);
    if (query.session_id !== undefined && conversationId === null) return { approvals: [], count: 0 };
    const rows = await listApprovalRecords(deps.pool, { ...listScope(caller), approver: { username: caller.username, role: caller.role }, status: (query.status as ApprovalStatus | undefined) ?? null, limit: query.limit, conversationId });
    return { approvals: rows.map(approvalWire), count: rows.length };
  });

  app.get('/approvals/:id', async (request) => {
    const { id } = parseWith(IdParams, request.params);
    return approvalWire(await deps.approvals.visible(v1Caller(request), id));
  });

  // The signed receipt of a decided approval (issue 28; audit/receipt.ts): same visibility as the approval.
  app.get('/approvals/:id/receipt', async (request) => {
    const { id } = parseWith(IdParams, request.params);
    await deps.approvals.visible(v1Caller(request), id);
    const stored = await getReceipt(deps.pool, id);
    if (!stored) throw new AirlockError('NOT_FOUND', 'This approval has no receipt: it is not decided yet.');
    return { receipt: stored.receipt, kid: stored.kid };
  });

  for (const decision of ['approve', 'deny'] as const) {
    app.post(`/approvals/:id/${decision}`, async (request) => {
      const { id } = parseWith(IdParams, request.params);
      // Only approve takes a grant ("Allow for 1 hour", issue 27); a grant on deny is an unknown field.
      const body: { reason?: string | null; grant?: GrantRequest; passkey?: unknown; arguments?: Record<string, unknown> } = parseWith(decision === 'approve' ? ApproveBody : DecisionBody, request.body);
      // The UI's inbox says so (issue 26: the channel on each decision); anything else is v1.
      const channel = request.headers['airlock-channel'] === 'inbox' ? 'inbox' : 'v1';
      // A step-up approval's passkey signature (issue 28; passkeys-routes.ts issued its nonce).
      const stepUp = body.passkey ? { assertion: body.passkey as StepUpAssertion, rp: requestRelyingParty(deps.publicUrl, request) } : undefined;
      return approvalWire(await deps.approvals.decide(v1Caller(request), id, decision, body.reason ?? null, channel, undefined, body.grant ?? null, stepUp, body.arguments ?? null));
    });
  }
};
