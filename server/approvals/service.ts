/**
 * Deciding approvals with no client attached (the v1 approvals API, the expiry job; any transport
 * with a signed-in decider). It lives in the approval domain and imports no transport: the
 * engine's submit is passed in (`SubmitDecisionTurn`, as recovery.ts takes it), and so is the
 * minting of the requester's token.
 * A decision goes through the engine exactly as a /chat confirm does: a turn, run as the requester,
 * whose first step is the one atomic
 * `pending -> approved|denied|expired` transition (db/approvals.ts), committed with its
 * approval.resolved event, then the resume of the paused graph. So it happens once across the
 * v1 API, /chat confirm and every tab, an open tab sees the card resolve and the answer stream, and a
 * crash after the decision is resumed by approvals/recovery.ts like any other.
 * @module
 */
import { hashJson } from '../canonical-json.ts';
import { insertAudit } from '../db/audit.ts';
import { refusedAttemptEntry } from './audit.ts';
import { getApprovalRecord, listDuePending, type ApprovalRecord } from '../db/approval-records.ts';
import type { Pool } from '../db/index.ts';
import type { UserRole } from '../auth/index.ts';
import { attemptRefusal, DEFAULT_TERMS, mayView, termsAt, type ApproverTerms, type DecisionChannel, type Person } from './approvers.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import { retryWhileBusy, type SubmitDecisionTurn } from './decision-turn.ts';
import { verifyStepUp, type RelyingParty, type StepUpAssertion } from './passkeys.ts';
import { checkEdit, unseenEditRefusal, type ApprovalEdit } from './edit.ts';
import type { AgentRuntime } from '../agent/index.ts';
import type { DecisionOrigin } from './types.ts';
import { grantRefusal } from './grants.ts';
import type { GrantRequest } from '../../src/lib/wire/index.ts';

/** Who decides: a signed-in user (the v1 caller fits it as it is). */
export interface Decider {
  userId: string;
  username: string;
  role: UserRole;
  tenant: string;
  /** The service client of an on-behalf call. */
  serviceClientId?: string;
}

/**
 * Pure: may this decider see (and so try to decide) an approval? The requester, a role with
 * approvals:decide in the tenant, or an approver the policy named (approvers.ts). Whether they
 * may then approve or deny is `decisionRefusal`'s.
 */
export function canDecide(decider: Pick<Decider, 'tenant' | 'userId' | 'role'> & { username?: string }, approval: { tenant: string; requestedBy: string; terms?: ApproverTerms }): boolean {
  return mayView(approval.terms ?? DEFAULT_TERMS, personOf(decider), { id: approval.requestedBy, tenant: approval.tenant });
}

const personOf = (d: Pick<Decider, 'tenant' | 'userId' | 'role'> & { username?: string }): Person => ({ id: d.userId, username: d.username ?? '', role: d.role, tenant: d.tenant });

export interface ApprovalServiceDeps {
  pool: Pool;
  /** The engine's submit (late-bound: the engine is built after the transports that use this). */
  submit: () => SubmitDecisionTurn;
  /** A token for the requester, minted now: the resume acts as them. */
  mintToken: (userId: string) => Promise<string>;
  /** The agent's check of an edit (AgentRuntime.reviewEdit; late-bound like submit): an edit is checked before it is submitted. */
  reviewEdit?: () => AgentRuntime['reviewEdit'];
  now?: () => Date;
  log: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

export type Decision = 'approve' | 'deny';

/** The decision step's refusals, passed on as they are. */
const STEP_REFUSALS = new Set(['FORBIDDEN', 'APPROVAL_NOT_FOUND', 'VALIDATION_ERROR', 'STEP_UP_REQUIRED']);

/** The expiry timer's decisions (the approval-expiry job of job-queue.ts). */
const EXPIRY_ORIGIN: DecisionOrigin = { method: 'JOB', path: 'approval-expiry' };

/**
 * Pure: where a decision attempt came in, as its audit rows say: a link's route (its token is never
 * stored: redacted as in the request log), else the v1 route.
 */
const attemptPath = (id: string, decision: Decision, channel: DecisionChannel): string =>
  channel === 'link' ? `/api/agent/v1/approve/[redacted]/${decision}` : `/api/agent/v1/approvals/${id}/${decision}`;

/** A refused attempt's audit outcome by its HTTP status (anything else: `error`). */
/** Pure: the request_id of one decider's attempt; the same decider retrying replays it. */
export const deciderRequestId = (approvalId: string, decision: Decision, deciderId: string): string => `v1-decide:${approvalId}:${decision}:${deciderId}`;

export function createApprovalService(deps: ApprovalServiceDeps) {
  const { pool } = deps;
  const now = deps.now ?? (() => new Date());
  /** Its approvers now: the escalation roles join once it escalated. */
  const termsNow = (r: ApprovalRecord): ApproverTerms => termsAt(r.terms, r.escalate, r.createdAt, now());

  /** The approval if this caller may see (and so decide) it; another tenant's is not found. */
  async function visible(caller: Decider, id: string): Promise<ApprovalRecord> {
    const record = await getApprovalRecord(pool, id);
    if (!record || !canDecide(caller, { tenant: record.requesterTenant, requestedBy: record.requestedBy, terms: termsNow(record) })) {
      throw new AirlockError('APPROVAL_NOT_FOUND', 'No such approval.');
    }
    return record;
  }

  /**
   * Submits the deciding turn and waits until the decision committed (its approval.resolved), or
   * the turn ended without deciding. The resume then goes on in the background. True when this
   * turn made the decision (not a concurrent confirm elsewhere).
   */
  async function submitDecision(record: ApprovalRecord, input: { action: 'confirm' | 'deny'; requestId: string; decidedBy: string | null; note: string | null; origin: DecisionOrigin; stopIfDecided?: boolean; grant?: GrantRequest | null; editedArgs?: Record<string, unknown> | null }): Promise<boolean> {
    // The resume acts as the requester with a token minted now, never the decider's own (it may
    // be someone else's, or near its end after a long wait).
    const token = await deps.mintToken(record.requestedBy);
    // A tab is just taking the conversation (its own confirm, say): wait for it a moment.
    // A decider's own attempt stops waiting once another decision landed (issue 30 finding 11): it
    // has lost, and is refused (409) rather than held for the busy window.
    const handle = await retryWhileBusy(
      async () => {
        if (input.stopIfDecided && (await getApprovalRecord(pool, record.id))?.status !== 'pending') throw new AirlockError('CONFLICT');
        return deps.submit()(
          { text: '', files: [], conversationId: record.conversationId, action: input.action, requestId: input.requestId, approvalId: record.id, decidedBy: input.decidedBy, decisionNote: input.note, origin: input.origin, grant: input.grant ?? null, ...(input.editedArgs ? { editedArgs: input.editedArgs } : {}) },
          { userId: record.requestedBy, token },
        );
      },
      { untilMs: Date.now() + 5_000, everyMs: 200 },
    );
    const events = handle.events();
    try {
      for await (const event of events) {
        // This turn decided it, or (M-of-N) counted this decider's approval towards it.
        if ((event.kind === 'approval.resolved' || event.kind === 'approval.approved') && (event.payload as { approval_id?: string } | undefined)?.approval_id === record.id) return true;
        if (event.kind === 'run.finished') {
          // The decision step refused it (not an approver, counted already): its own answer.
          const p = event.payload as { status?: string; error_code?: string; error_detail?: string } | undefined;
          if (p?.status === 'failed' && p.error_code && STEP_REFUSALS.has(p.error_code)) throw new AirlockError(p.error_code as 'FORBIDDEN' | 'APPROVAL_NOT_FOUND' | 'VALIDATION_ERROR', p.error_detail);
          return false;
        }
      }
      return false;
    } finally {
      // Stop following only: the run belongs to the engine and goes on.
      void events.return?.(undefined);
    }
  }

  /** The edit checked as the decision step will check it (edit.ts checkEdit), run as the requester; null: no change, or no reviewer here. */
  async function precheckEdit(caller: Decider, record: ApprovalRecord, editedArgs: Record<string, unknown>, grant: GrantRequest | null = null) {
    if (!deps.reviewEdit) return null;
    const token = await deps.mintToken(record.requestedBy);
    const review = deps.reviewEdit();
    const edit: ApprovalEdit = { args: editedArgs, review: (tool, args) => review({ tool, args, userToken: token }) };
    return checkEdit({ ...record, currentActionHash: record.finalActionHash ?? record.actionHash }, { edit, person: personOf(caller), requester: { id: record.requestedBy, tenant: record.requesterTenant }, grant });
  }

  /**
   * What a step-up passkey signs for this caller (passkey-challenge): the approval's action hash as
   * it is now, or, with `editedArgs`, the final action hash of that edit (checked as an approve with
   * it would be), so an edit into a step-up rule is signed like a direct call of it.
   */
  async function stepUpTarget(caller: Decider, id: string, editedArgs: Record<string, unknown> | null): Promise<{ id: string; actionHash: string }> {
    const record = await visible(caller, id);
    if (record.status !== 'pending') throw new AirlockError('CONFLICT', `This approval is already ${record.status}.`, { details: { status: record.status } });
    const checked = editedArgs ? await precheckEdit(caller, record, editedArgs) : null;
    const hash = checked?.finalActionHash ?? record.finalActionHash ?? record.actionHash;
    if (!hash) throw new AirlockError('CONFLICT', 'This approval has no action hash to sign.');
    return { id, actionHash: hash };
  }

  /**
   * Approve or deny one pending approval. Returns the record after the decision. The decision's
   * audit row is written by the decision step itself (approvals/audit.ts) from `origin`; a
   * refused attempt is audited by `decide` below.
   */
  async function decideAttempt(
    caller: Decider, id: string, decision: Decision, reason: string | null, channel: DecisionChannel = 'v1', linkTokenHash?: string, grant: GrantRequest | null = null,
    /** The approver's passkey signature and the relying party it was made for (issue 28 step-up). */
    stepUp?: { assertion: StepUpAssertion; rp: RelyingParty },
    /** Approve these arguments instead of the proposed ones (issue 27 item 1; approvals/edit.ts). */
    editedArgs: Record<string, unknown> | null = null,
  ): Promise<ApprovalRecord> {
    if (editedArgs && decision !== 'approve') throw new AirlockError('VALIDATION_ERROR', 'arguments go with approve only: a denial runs nothing.');
    const record = await visible(caller, id);
    const origin: DecisionOrigin = { method: 'POST', path: attemptPath(id, decision, channel), serviceActor: caller.serviceClientId ?? null, channel, ...(linkTokenHash ? { linkTokenHash } : {}) };
    // Visible but not theirs to decide: 403 before anything is submitted (the decision step
    // checks again, under the approval's lock).
    // "Already approved by you" counts only while it waits: a decided one is a conflict, audited below.
    const refusal = attemptRefusal(termsNow(record), personOf(caller), { id: record.requestedBy, tenant: record.requesterTenant }, decision, record.status === 'pending' ? record.decisions : []);
    if (refusal) throw new AirlockError(refusal.code, refusal.message, refusal.code === 'CONFLICT' ? { details: { status: record.status } } : undefined);
    // A grant that cannot be made is refused before anything is submitted (the decision step checks again).
    const grantRefused = grant && record.status === 'pending' ? grantRefusal(record.grantOffer, grant, caller, record.args, record.grantRule) : null;
    if (grantRefused) throw new AirlockError(grantRefused.code, grantRefused.message, grantRefused.details ? { details: grantRefused.details } : undefined);
    // A link's page shows the call as proposed: an approval edited since is not approved from it.
    const unseen = record.status === 'pending' ? unseenEditRefusal(record, channel, { decision, edited: !!editedArgs }) : null;
    if (unseen) throw new AirlockError(unseen.code, unseen.message);
    // An edit is checked before anything is submitted (400 field errors, 403 policy or approvers),
    // so a refused edit leaves no failed turn; the decision step checks it again under the lock.
    const checked = editedArgs && record.status === 'pending' ? await precheckEdit(caller, record, editedArgs, grant) : null;
    if (record.status !== 'pending') {
      throw new AirlockError('CONFLICT', `This approval is already ${record.status}.`, { details: { status: record.status } });
    }
    if (record.expiresAt.getTime() <= now().getTime()) {
      await expireDue(record.id).catch(() => {});
      throw new AirlockError('APPROVAL_EXPIRED');
    }
    // A step-up of the approval, or of the rule an edit brings it under (issue 36), as a direct call would need.
    if (decision === 'approve' && (record.stepUp === 'passkey' || checked?.stepUp === 'passkey')) {
      // Verified here (the nonce used up, the signature checked over the action hash as it is
      // now, or as the edit makes it); the decision step records it only if that is still the approval's hash.
      if (!stepUp) throw new AirlockError('STEP_UP_REQUIRED', 'This approval needs your passkey: ask POST …/passkey-challenge for a nonce (with the edited `arguments`, if you edit), sign it, and approve with `passkey`.');
      const hash = checked?.finalActionHash ?? record.finalActionHash ?? record.actionHash;
      if (!hash) throw new AirlockError('INTERNAL', 'A step-up approval has no action hash.');
      origin.passkey = { actionHash: hash, proof: await verifyStepUp(pool, caller, { id, actionHash: hash }, stepUp.rp, stepUp.assertion) };
    }
    let mine = false;
    try {
      mine = await submitDecision(record, {
        action: decision === 'approve' ? 'confirm' : 'deny',
        // One request per decider: a shared id would replay the winner's turn to every concurrent
        // decider (all 200, one audit row). Per decider, each loser's turn finds it decided (409).
        // By link, each link is its own attempt: a refused one (a changed action) is not replayed
        // to the same approver's next, good link.
        // An edit is its own attempt too: a refused edit (a field error) must not block a corrected one.
        requestId: deciderRequestId(id, decision, caller.userId) + (linkTokenHash ? `:${linkTokenHash.slice(0, 16)}` : '') + (editedArgs ? `:edit-${hashJson(editedArgs).slice(0, 16)}` : ''),
        decidedBy: caller.userId,
        note: reason,
        origin,
        stopIfDecided: true,
        grant,
        editedArgs,
      });
    } catch (error) {
      if (!isAirlockError(error) || !['APPROVAL_NOT_FOUND', 'CONFLICT', 'CONVERSATION_BUSY'].includes(error.code)) throw error;
      // Busy, and still pending: a real busy conversation, not a lost race.
      if (error.code === 'CONVERSATION_BUSY' && (await getApprovalRecord(pool, id))?.status === 'pending') throw error;
    }
    const after = (await getApprovalRecord(pool, id))!;
    if (!mine) {
      // Someone else (a tab's confirm, another operator) decided first: once means once.
      const message = after.status === 'pending' ? 'This decision was not recorded; the approval still waits.' : `This approval is already ${after.status}.`;
      throw new AirlockError('CONFLICT', message, { details: { status: after.status } });
    }
    return after;
  }

  /**
   * `decideAttempt`, and every attempt it refuses (or fails) gets its own audit row (CONTRACTS:
   * every attempt has one): a second approve by the same person (409), the requester approving
   * their own two-person request (403), a lost race (409), an expired one (410), a refused edit or
   * grant (400/403), a missing step-up (403), an approval the caller may not see (404).
   */
  async function decide(...args: Parameters<typeof decideAttempt>): Promise<ApprovalRecord> {
    try {
      return await decideAttempt(...args);
    } catch (error) {
      await auditRefused(args, error).catch((failed) => deps.log.warn({ err: failed, approvalId: args[1] }, 'a refused decision attempt could not be audited'));
      throw error;
    }
  }

  /**
   * The audit row of one refused attempt: its status and code; of an approval the caller may not
   * see, only its id. Also for a front door's own refusals before `decide` (a link's: used,
   * expired, another approver's, a changed action).
   */
  async function auditRefused([caller, id, decision, reason, channel = 'v1']: Parameters<typeof decideAttempt>, error: unknown): Promise<void> {
    const found = isAirlockError(error) && error.code === 'APPROVAL_NOT_FOUND' ? null : await getApprovalRecord(pool, id);
    const record = found && canDecide(caller, { tenant: found.requesterTenant, requestedBy: found.requestedBy, terms: termsNow(found) }) ? found : null;
    await insertAudit(pool, refusedAttemptEntry({
      actor: { serviceActor: caller.serviceClientId ?? null, userId: caller.userId, username: caller.username, role: caller.role },
      approvalId: id, decision, path: attemptPath(id, decision, channel), channel, reason, error,
      seen: record ? { tool: record.tool, requestedBy: record.requestedBy, conversationId: record.conversationId } : null,
    }));
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

  return { visible, decide, expireDue, auditRefused, stepUpTarget };
}
