/**
 * Deciding approvals with no client attached. A decision goes through the engine exactly as a
 * /chat confirm does: a turn, run as the requester, whose first step is the one atomic
 * `pending -> approved|denied|expired` transition (db/approvals.ts), committed with its
 * approval.resolved event, then the resume of the paused graph. So it happens once across this
 * API, /chat confirm and every tab, an open tab sees the card resolve and the answer stream, and a
 * crash after the decision is resumed by approvals/recovery.ts like any other.
 * @module
 */
import { insertAudit } from '../db/audit.ts';
import { getApprovalRecord, listDuePending, type ApprovalRecord } from '../db/approval-records.ts';
import type { Pool } from '../db/index.ts';
import { retryWhileBusy } from '../approvals/decision-turn.ts';
import type { DecisionOrigin, Engine } from '../engine/index.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import { canDecide, type V1Caller } from './identity.ts';
import type { UserTokenMinter } from './user-token.ts';

export interface ApprovalServiceDeps {
  pool: Pool;
  engine: () => Engine;
  mintToken: UserTokenMinter;
  now?: () => Date;
  log: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

export type Decision = 'approve' | 'deny';

/** The expiry timer's decisions (the approval-expiry job of job-queue.ts). */
const EXPIRY_ORIGIN: DecisionOrigin = { method: 'JOB', path: 'approval-expiry' };

/** Pure: the request_id of one decider's attempt; the same decider retrying replays it. */
export const deciderRequestId = (approvalId: string, decision: Decision, deciderId: string): string => `v1-decide:${approvalId}:${decision}:${deciderId}`;

export function createApprovalService(deps: ApprovalServiceDeps) {
  const { pool } = deps;
  const now = deps.now ?? (() => new Date());

  /** The approval if this caller may see (and so decide) it; another tenant's is not found. */
  async function visible(caller: V1Caller, id: string): Promise<ApprovalRecord> {
    const record = await getApprovalRecord(pool, id);
    if (!record || !canDecide(caller, { tenant: record.requesterTenant, requestedBy: record.requestedBy })) {
      throw new AirlockError('APPROVAL_NOT_FOUND', 'No such approval.');
    }
    return record;
  }

  /**
   * Submits the deciding turn and waits until the decision committed (its approval.resolved), or
   * the turn ended without deciding. The resume then goes on in the background. True when this
   * turn made the decision (not a concurrent confirm elsewhere).
   */
  async function submitDecision(record: ApprovalRecord, input: { action: 'confirm' | 'deny'; requestId: string; decidedBy: string | null; note: string | null; origin: DecisionOrigin; stopIfDecided?: boolean }): Promise<boolean> {
    // The resume acts as the requester with a token minted now, never the decider's own (it may
    // be someone else's, or near its end after a long wait).
    const token = await deps.mintToken(record.requestedBy);
    // A tab is just taking the conversation (its own confirm, say): wait for it a moment.
    // A decider's own attempt stops waiting once another decision landed (issue 30 finding 11): it
    // has lost, and is refused (409) rather than held for the busy window.
    const handle = await retryWhileBusy(
      async () => {
        if (input.stopIfDecided && (await getApprovalRecord(pool, record.id))?.status !== 'pending') throw new AirlockError('CONFLICT');
        return deps.engine().submit(
          { text: '', files: [], conversationId: record.conversationId, action: input.action, requestId: input.requestId, approvalId: record.id, decidedBy: input.decidedBy, decisionNote: input.note, origin: input.origin },
          { userId: record.requestedBy, token },
        );
      },
      { untilMs: Date.now() + 5_000, everyMs: 200 },
    );
    const events = handle.events();
    try {
      for await (const event of events) {
        if (event.kind === 'approval.resolved' && event.payload.approval_id === record.id) return true;
        if (event.kind === 'run.finished') return false;
      }
      return false;
    } finally {
      // Stop following only: the run belongs to the engine and goes on.
      void events.return?.(undefined);
    }
  }

  /**
   * Approve or deny one pending approval. Returns the record after the decision. The decision's
   * audit row is written by the decision step itself (approvals/audit.ts) from `origin`; a
   * refused attempt (409) is audited here.
   */
  async function decide(caller: V1Caller, id: string, decision: Decision, reason: string | null): Promise<ApprovalRecord> {
    const record = await visible(caller, id);
    const origin: DecisionOrigin = { method: 'POST', path: `/api/agent/v1/approvals/${id}/${decision}`, serviceActor: caller.serviceClientId ?? null };
    const refused = () =>
      insertAudit(pool, {
        serviceActor: origin.serviceActor ?? null,
        userId: caller.userId,
        username: caller.username,
        userRole: caller.role,
        operation: `approval.${decision}`,
        method: origin.method,
        path: origin.path,
        arguments: { approval_id: id, tool: record.tool, reason, requested_by: record.requestedBy },
        outcome: 'conflict',
        statusCode: 409,
        errorCode: 'CONFLICT',
        toolCallId: null,
        conversationId: record.conversationId,
        durationMs: null,
      });
    if (record.status !== 'pending') {
      await refused();
      throw new AirlockError('CONFLICT', `This approval is already ${record.status}.`, { details: { status: record.status } });
    }
    if (record.expiresAt.getTime() <= now().getTime()) {
      await expireDue(record.id).catch(() => {});
      throw new AirlockError('APPROVAL_EXPIRED');
    }
    let mine = false;
    try {
      mine = await submitDecision(record, {
        action: decision === 'approve' ? 'confirm' : 'deny',
        // One request per decider: a shared id would replay the winner's turn to every concurrent
        // decider (all 200, one audit row). Per decider, each loser's turn finds it decided (409).
        requestId: deciderRequestId(id, decision, caller.userId),
        decidedBy: caller.userId,
        note: reason,
        origin,
        stopIfDecided: true,
      });
    } catch (error) {
      if (!isAirlockError(error) || !['APPROVAL_NOT_FOUND', 'CONFLICT', 'CONVERSATION_BUSY'].includes(error.code)) throw error;
      // Busy, and still pending: a real busy conversation, not a lost race.
      if (error.code === 'CONVERSATION_BUSY' && (await getApprovalRecord(pool, id))?.status === 'pending') throw error;
    }
    const after = (await getApprovalRecord(pool, id))!;
    if (!mine) {
      // Someone else (a tab's confirm, another operator) decided first: once means once.
      await refused();
      throw new AirlockError('CONFLICT', `This approval is already ${after.status}.`, { details: { status: after.status } });
    }
    return after;
  }

  /**
   * Expires pending approvals past their expires_at (one, or every due one): the turn that records
   * `expired` (reason approval_timeout) also resumes the graph with that decision, so the tool never
   * runs, the model is told, and the run finishes. Throws when a due one could not be handled now
   * (the queue retries).
   */
  async function expireDue(approvalId: string | null, options: { strict?: boolean } = {}): Promise<number> {
    const due = await listDuePending(pool, approvalId, now());
    if (options.strict && approvalId && due.length === 0) {
      // The job fired a moment before expires_at by this clock: fail it, the queue retries in a second.
      const record = await getApprovalRecord(pool, approvalId);
      if (record?.status === 'pending') throw new AirlockError('SERVICE_UNAVAILABLE', 'The approval is not due yet.');
    }
    const byConversation = new Map<string, (typeof due)[number]>();
    for (const a of due) if (!byConversation.has(a.conversationId)) byConversation.set(a.conversationId, a);
    let failed: unknown;
    for (const a of byConversation.values()) {
      try {
        const record = await getApprovalRecord(pool, a.id);
        if (!record || record.status !== 'pending') continue;
        await submitDecision(record, { action: 'deny', requestId: `v1-expire:${a.id}`, decidedBy: null, note: null, origin: EXPIRY_ORIGIN });
        deps.log.info({ approvalId: a.id, conversationId: a.conversationId }, 'approval expired');
      } catch (error) {
        if (isAirlockError(error) && error.code === 'APPROVAL_NOT_FOUND') continue; // decided meanwhile
        failed = error;
      }
    }
    if (failed) throw failed;
    return byConversation.size;
  }

  return { visible, decide, expireDue };
}
