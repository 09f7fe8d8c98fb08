/**
 * The approval steps of a /chat turn: resolving what the turn decides (atomically, once), working
 * out the resume the thread is owed, and opening approvals when the agent pauses. Decisions are in
 * rules.ts; SQL in db/approvals.ts.
 * @module
 */
import type { AgentRuntime, ApprovalDecision, PendingApproval } from '../agent/index.ts';
import { consumeApprovalLink } from '../db/approval-links.ts';
import { enqueueApprovalEvent } from '../db/approval-outbox.ts';
import { findPerson, insertApprovalDecision, readDecisionAttempt, type ApprovalDecisionRow, listApprovalDecisions, lockPendingApproval } from '../db/approval-decisions.ts';
import { closeStateChanged, createApproval, linkGrant, linkReplaced, listDecidedNotResumed, listPendingApprovals, markResumed, resolveApproval, type Approval } from '../db/approvals.ts';
import { insertAudit } from '../db/audit.ts';
import type { Queryable } from '../db/index.ts';
import { AirlockError } from '../errors.ts';
import { approvalPrompt, type ArgumentLabels, type EffectPreview } from '../operations/index.ts';
import type { ApprovalTerms, GrantOffer, PolicyStamp } from '../policy/index.ts';
import type { GrantRequest } from '../../src/lib/wire/index.ts';
import { attemptRefusal, decisionRefusal, tally, termsAt } from './approvers.ts';
import { auditDecision, CHAT_ORIGIN, refusedAttemptEntry } from './audit.ts';
import { applyEdit, termsRow, unseenEditRefusal, type ApprovalEdit } from './edit.ts';
import { approversOf, grantMadeOf, grantRefusal, makeGrant, type GrantMade } from './grants.ts';
import { writeReceipt } from './receipt.ts';
import { actionHash, decisionOf, hashArgs, resumeDecisions, selectApprovals, type ApprovalReason, type ResolvedResult } from './rules.ts';
import type { PasskeyProof } from '../audit/passkey.ts';
import { channelOf, type DecisionAction, type DecisionOrigin } from './types.ts';

export interface ResolvedApproval {
  approvalId: string;
  result: ResolvedResult;
  reason: ApprovalReason;
  /** The row as the decision left it. */
  approval: Approval;
  /** The standing grant this approval made ("Allow … for 1 h"): the card and the history say so (issue 37 item 6). */
  grantMade?: GrantMade;
}

/** One approver's approval that leaves an M-of-N approval pending (ledger `approval.approved`). */
export interface ApprovalProgress {
  approvalId: string;
  /** The approver's username. */
  by: string;
  /** Every approver so far, in order (usernames): the stored card's `approved_by`. */
  approvedBy: string[];
  approvedCount: number;
  approvalsRequired: number;
}

export interface DecisionOutcome {
  resolved: ResolvedApproval[];
  progress: ApprovalProgress[];
}

type DecisionTurn = {
  conversationId: string; userId: string; action: DecisionAction | null; approvalId: string | null; now: () => Date; decidedBy?: string | null; note?: string | null; origin?: DecisionOrigin;
  /** A confirm that also makes a standing grant ("Allow for 1 hour", grants.ts). */
  grant?: GrantRequest | null;
  /** Write each transition's notification to the outbox (APPROVAL_WEBHOOKS configured; issue 26 item 3). */
  outbox?: boolean;
  /** A confirm's arguments as its approver edited them (issue 27 item 1; edit.ts). */
  edit?: ApprovalEdit | null;
};

/**
 * Resolves the pending approvals this turn decides: all of them for a new message (superseded),
 * exactly one for a confirm or deny. Approvals a concurrent request resolved first are skipped.
 * A person's confirm or deny is first one approver's decision (`countDecision`): it may only add
 * to the count of an M-of-N approval (progress). Each decision writes its audit row (audit.ts) in
 * `db`, the decision's transaction, and a terminal one its signed receipt (receipt.ts).
 * A decision with nothing pending resolves nothing: the caller may still owe a resume.
 */
export async function decideApprovals(
  db: Queryable,
  turn: DecisionTurn,
  /**
   * The conversation's pending approvals when the caller has just read them under the conversation
   * lease (no new pause can open meanwhile; one a concurrent request resolved is skipped below).
   */
  known?: Approval[],
): Promise<DecisionOutcome> {
  // An edit says what to run: a denial runs nothing, so it has nothing to edit.
  if (turn.edit && turn.action !== 'confirm') throw new AirlockError('VALIDATION_ERROR', 'arguments go with a confirm only: a denial runs nothing.');
  const pending = known ?? (await listPendingApprovals(db, turn.conversationId));
  const outcome: DecisionOutcome = { resolved: [], progress: [] };
  if (turn.action && pending.length === 0) return outcome;
  const selection = selectApprovals({ pending, action: turn.action, approvalId: turn.approvalId, now: turn.now() });
  if (!selection.ok) throw new AirlockError(selection.code, selection.message);
  for (const { id, resolution } of selection.resolve) {
    let approval = pending.find((p) => p.id === id)!;
    let counted: Awaited<ReturnType<typeof countDecision>> | undefined;
    if (turn.action && resolution.outcome !== 'expired') {
      counted = await countDecision(db, turn, approval, turn.action === 'confirm' ? 'approve' : 'deny');
      if (!counted) continue; // decided meanwhile
      approval = counted.approval; // as an edit left it
      if (counted.state === 'pending') {
        await auditDecision(db, { approval, result: 'progress', decider: counted.person, note: turn.note ?? null, origin: turn.origin, count: { approved: counted.approved, required: approval.terms.required } });
        outcome.progress.push({ approvalId: id, by: counted.person.username, approvedBy: counted.decisions.filter((d) => d.decision === 'approve').map((d) => d.username), approvedCount: counted.approved, approvalsRequired: approval.terms.required });
        if (turn.outbox) await enqueueApprovalEvent(db, 'approval.progress', id);
        continue;
      }
    }
    const resolved = await writeTerminalDecision(db, turn, id, resolution, counted?.decisions);
    if (resolved) outcome.resolved.push(resolved);
  }
  return outcome;
}

/** Front doors whose decisions go through the approval service, which audits their refusals itself. */
const SERVICE_CHANNELS = new Set(['v1', 'link', 'inbox']);

/**
 * The pre-check of a decision turn (issue 26): the refusal its decision step would fail the turn
 * with (404, 403, 409: attemptRefusal), thrown before the turn is submitted, as the v1 API does, so
 * the conversation is left as it was. Checked when the attempt comes to one pending approval, not
 * past its expiry (that turn records the expiry); otherwise the turn answers as it always did.
 * `deciderId`: who decides (the v1 caller, else the user submitting).
 */
export async function precheckDecision(db: Queryable, attempt: { conversationId: string; approvalId: string | null; action: DecisionAction; deciderId: string; now: Date; origin?: DecisionOrigin }): Promise<void> {
  const { decider, pending } = await readDecisionAttempt(db, attempt);
  const target = pending.length === 1 ? pending[0] : null;
  if (!target || target.expiresAt.getTime() <= attempt.now.getTime()) return;
  if (!decider || target.requesterTenant === null) throw new AirlockError('FORBIDDEN', 'Only a known user may decide an approval.');
  const terms = termsAt(target.terms, target.escalate, target.createdAt, attempt.now);
  const decision = attempt.action === 'confirm' ? 'approve' : 'deny';
  const refusal = attemptRefusal(terms, decider, { id: target.requestedBy, tenant: target.requesterTenant }, decision, target.decisions);
  if (!refusal) return;
  // Refused before any run: audited here for the doors that submit straight to the engine (/chat,
  // AG-UI, MCP); v1, links and the inbox audit their own refusals (service.ts), once.
  const error = new AirlockError(refusal.code, refusal.message);
  const origin = attempt.origin ?? CHAT_ORIGIN;
  if (SERVICE_CHANNELS.has(channelOf(origin))) throw error;
  await insertAudit(db, refusedAttemptEntry({
    actor: { serviceActor: origin.serviceActor ?? null, userId: decider.id, username: decider.username, role: decider.role },
    approvalId: target.id, decision, path: origin.path, channel: channelOf(origin), reason: null, error,
    // One they may not see is named by its id only.
    seen: refusal.code === 'APPROVAL_NOT_FOUND' ? null : { tool: target.tool, requestedBy: target.requestedBy, conversationId: attempt.conversationId },
  }));
  throw error;
}

/**
 * One approver's decision on a pending approval, under its row lock: refused (404 invisible,
 * 403 not an approver, 409 counted already), else recorded with its channel and tallied. Null
 * when the approval is not pending any more.
 */
async function countDecision(db: Queryable, turn: DecisionTurn, proposed: Approval, decision: 'approve' | 'deny') {
  // The requester comes with the lock (no read of their user row of its own: issue 26 review).
  const locked = await lockPendingApproval(db, proposed.id);
  if (!locked) return null;
  const person = await findPerson(db, turn.decidedBy ?? turn.userId);
  if (!person || locked.tenant === null) throw new AirlockError('FORBIDDEN', 'Only a known user may decide an approval.');
  const requester = { id: locked.id, tenant: locked.tenant };
  const refusal = decisionRefusal(termsAt(proposed.terms, proposed.escalate, proposed.createdAt, turn.now()), person, requester, decision);
  if (refusal) throw new AirlockError(refusal.code, refusal.message);
  // An edit first (edit.ts): it may change who must approve, and it forgets the approvals so far.
  const approval = turn.edit && decision === 'approve' ? await applyEdit(db, { approval: proposed, edit: turn.edit, person, requester, now: turn.now(), grant: turn.grant }) : proposed;
  const unseen = unseenEditRefusal(approval, channelOf(turn.origin), { decision, edited: !!turn.edit });
  if (unseen) throw new AirlockError(unseen.code, unseen.message);
  // Step-up (issue 28): approving needs the approver's passkey signature over this very action
  // hash, verified by the route that took it (approvals/passkeys.ts). Whatever came without one
  // (/chat, AG-UI, MCP, v1 without `passkey`) is refused here, under the approval's lock.
  const passkey = stepUpProof(approval, decision, turn.origin);
  // A decision by link uses the link up here, in the decision's transaction, or not at all.
  if (turn.origin?.linkTokenHash) {
    const consumed = await consumeApprovalLink(db, { tokenHash: turn.origin.linkTokenHash, approvalId: approval.id, userId: person.id, actionHash: approval.finalActionHash ?? approval.actionHash, now: turn.now() });
    if (!consumed) throw new AirlockError('CONFLICT', 'This link is used, expired, or no longer matches the action.');
  }
  const recorded = await insertApprovalDecision(db, { approvalId: approval.id, userId: person.id, decision, decidedAt: turn.now(), channel: channelOf(turn.origin), note: turn.note ?? null, passkey });
  if (!recorded) throw new AirlockError('CONFLICT', 'You have already decided this approval: no approver counts twice.');
  const decisions = await listApprovalDecisions(db, [approval.id]);
  return { ...tally(approval.terms, decisions), person, decisions, approval };
}

/**
 * Pure: the passkey proof this decision records: required to approve a step-up approval, and only
 * over its action hash as it is now (an edit's final action hash: an edit into a step-up rule is
 * signed like a direct call of it, issue 36).
 */
export function stepUpProof(approval: Pick<Approval, 'stepUp' | 'actionHash'> & { finalActionHash?: string | null }, decision: 'approve' | 'deny', origin: DecisionOrigin | undefined): PasskeyProof | null {
  const current = approval.finalActionHash ?? approval.actionHash;
  const signed = origin?.passkey && origin.passkey.actionHash === current ? origin.passkey.proof : null;
  if (approval.stepUp === 'passkey' && decision === 'approve' && !signed) {
    throw new AirlockError('STEP_UP_REQUIRED', 'This approval needs your passkey signature: confirm it from the card or the approvals inbox, which ask your passkey.');
  }
  return decision === 'approve' ? signed : null;
}

/**
 * The terminal decision of one approval: the atomic pending -> approved|denied|expired transition
 * and its audit row, in `db` (the decision's transaction). The one place an approval ends (issue
 * 28 writes its receipt here). Null when a concurrent request ended it first.
 */
export async function writeTerminalDecision(
  db: Queryable,
  turn: DecisionTurn,
  id: string,
  resolution: { outcome: Exclude<Approval['status'], 'pending'>; result: ResolvedResult; reason: ApprovalReason },
  /** The approval's decisions when the caller has just listed them under its lock (countDecision). */
  known?: ApprovalDecisionRow[],
): Promise<ResolvedApproval | null> {
  const row = await resolveApproval(db, { id, userId: turn.userId, status: resolution.outcome, reason: resolution.reason, now: turn.now(), decidedBy: turn.decidedBy, note: turn.note });
  if (!row) return null;
  // "Allow for 1 hour": the grant is made here, with the approval it comes from, or not at all
  // (a refusal throws and the decision's transaction rolls back: the approval stays pending).
  const grantMade = turn.grant && row.status === 'approved' ? await grantOf(db, row, turn.grant, turn.now()) : undefined;
  if (grantMade) row.grantId = grantMade.id;
  // Audited and receipted here, in the decision's transaction: the one step every decision passes.
  const audited = await auditDecision(db, { approval: row, result: resolution.result, decider: row.decider, note: turn.note ?? null, origin: turn.origin });
  const decisions = known ?? (await listApprovalDecisions(db, [row.id]));
  await writeReceipt(db, { approval: row, decider: row.decider, decisions, origin: turn.origin, auditHash: audited.hash });
  if (turn.outbox) await enqueueApprovalEvent(db, row.status === 'expired' ? 'approval.expired' : 'approval.decided', row.id);
  return { approvalId: row.id, result: resolution.result, reason: resolution.reason, approval: row, ...(grantMade ? { grantMade } : {}) };
}

/** The grant an approval's approver asked for, checked against what its rule offered, then made and linked. */
async function grantOf(db: Queryable, row: Approval & { decider: { id: string; role: string } | null }, request: GrantRequest, now: Date): Promise<GrantMade> {
  const requester = await findPerson(db, row.requestedBy);
  if (!row.decider || !requester) throw new AirlockError('FORBIDDEN', 'Only a known user may make a grant.');
  const refusal = grantRefusal(row.grantOffer, request, row.decider, row.args, row.grantRule);
  if (refusal) throw new AirlockError(refusal.code, refusal.message, refusal.details ? { details: refusal.details } : undefined);
  const made = { tool: row.tool, requestedBy: row.requestedBy, offer: row.grantOffer!, rule: row.grantRule!, approvers: row.terms };
  const grantId = await makeGrant(db, made, request, { deciderId: row.decider.id, requesterTenant: requester.tenant }, now);
  await linkGrant(db, row.id, grantId);
  return grantMadeOf(grantId, request, made.offer, now);
}

export interface OwedResume {
  decisions: Record<string, ApprovalDecision>;
  /** The approval rows the resume consumes (marked resumed once the graph is past the pause). */
  approvalIds: string[];
  /** True when at least one decision lets an action run (a confirmed action must never be dropped). */
  runsSomething: boolean;
  /** The thread's pending approvals as read for this resume (the resume need not read them again). */
  paused: PendingApproval[];
}

/**
 * The resume a paused thread is owed: every interrupt of the paused batch decided, none of them
 * resumed yet. Null while one is still pending or when nothing is owed. Decisions the graph has
 * already consumed (a crash after the resume got past the pause) are marked resumed here.
 */
export async function owedResume(
  db: Queryable,
  agent: AgentRuntime,
  threadId: string,
  now: () => Date,
  read: {
    /** The thread's decided, not resumed approvals when the caller has just read them. */
    decided?: Approval[];
    /** The thread's paused interrupts when the caller started reading them already (alongside its decision). */
    paused?: Promise<PendingApproval[]>;
  } = {},
): Promise<OwedResume | null> {
  const decided = read.decided ?? (await listDecidedNotResumed(db, threadId));
  if (decided.length === 0) return null;
  const paused = await (read.paused ?? agent.pendingApprovals(threadId));
  const live = decided.filter((d) => paused.some((p) => p.interruptId === d.interruptId));
  const consumed = decided.filter((d) => !live.includes(d)).map((d) => d.id);
  await markResumed(db, consumed, now());
  if (live.length === 0) return null;
  const decisions = resumeDecisions(
    paused,
    live.map((d) => ({ interruptId: d.interruptId, approvalId: d.id, decision: decisionOf({ status: d.status as Exclude<typeof d.status, 'pending'>, reason: d.reason, preview: d.preview, decisionNote: d.decisionNote }), actionHash: d.actionHash, requestedBy: d.requestedBy, finalArgs: d.finalArgs, finalActionHash: d.finalActionHash })),
  );
  if (!decisions) return null;
  return { decisions, approvalIds: live.map((d) => d.id), runsSomething: Object.values(decisions).some((d) => d.approved), paused };
}

/**
 * The conversation's decided, not resumed approvals right after a decision, worked out from what
 * the turn read before it (`unresumed`) and what it resolved; null when that cannot be known (a
 * pending approval was left undecided or resolved by someone else: read them again).
 */
export function decidedAfter(unresumed: Approval[], resolved: ResolvedApproval[]): Approval[] | null {
  const byId = new Map(resolved.map((r) => [r.approvalId, r.approval]));
  const after = unresumed.map((a) => (a.status === 'pending' ? byId.get(a.id) : a));
  return after.every((a) => a !== undefined) ? (after as Approval[]) : null;
}

/** Threads with decisions not yet resumed (the start-up recovery's work list), with who decided. */
export async function threadsOwedResume(db: Queryable): Promise<Array<{ threadId: string; conversationId: string; userId: string }>> {
  const seen = new Map<string, { threadId: string; conversationId: string; userId: string }>();
  for (const a of await listDecidedNotResumed(db)) {
    if (!seen.has(a.threadId)) seen.set(a.threadId, { threadId: a.threadId, conversationId: a.conversationId, userId: a.requestedBy });
  }
  return [...seen.values()];
}


export interface OpenedApproval {
  approvalId: string;
  toolCallId: string;
  tool: string;
  input: Record<string, unknown>;
  prompt: string;
  expiresAt: Date;
  timeoutS: number;
  /** The policy decision that paused the call. */
  policy?: PolicyStamp;
  /** How many approvers it needs (issue 26), and, when more than one, who may give them (issue 37 item 4). */
  approvalsRequired: number;
  approvers?: { roles: string[]; users: string[] };
  /** Each approver signs with a passkey (issue 28 step-up). */
  stepUp?: 'passkey';
  /** The effect's preview (issue 27); null: the tool has none. */
  preview: EffectPreview | null;
  /** Human labels of the arguments. */
  labels: ArgumentLabels;
  /** The approval of the same call this one replaces, closed because the state changed (412). */
  replaces?: { approvalId: string; reason: 'state_changed' };
  /** The grant its approver may make instead of a one-off confirm; null: not grantable. */
  grant: GrantOffer | null;
}

/**
 * Records one pending approval per paused tool call, each bound to its action, with its rule's
 * approvers; each expires after its rule's timeout_s, else the configured one.
 */
export async function openApprovals(
  db: Queryable,
  pause: {
    conversationId: string; userId: string; pending: PendingApproval[]; timeoutS: number; now: () => Date; outbox?: boolean;
    /** The pausing turn's W3C traceparent, kept on each row for its wait span (server/telemetry); null when traces are off. */
    traceParent?: string | null;
  },
): Promise<OpenedApproval[]> {
  const opened: OpenedApproval[] = [];
  for (const p of pause.pending) {
    const timeoutS = p.terms?.timeout_s ?? pause.timeoutS;
    const expiresAt = new Date(pause.now().getTime() + timeoutS * 1000);
    const prompt = p.prompt ?? approvalPrompt(p.tool, p.args);
    const approval = await createApproval(db, {
      conversationId: pause.conversationId,
      threadId: pause.conversationId,
      interruptId: p.interruptId,
      toolCallId: p.toolCallId,
      tool: p.tool,
      args: p.args,
      argsHash: hashArgs(p.args),
      actionHash: actionHash({ tool: p.tool, args: p.args, userId: pause.userId }),
      prompt,
      requestedBy: pause.userId,
      expiresAt,
      policy: p.policy ?? null,
      terms: termsRow(p.terms),
      escalate: p.terms?.escalate ? { afterS: p.terms.escalate.after_s, roles: p.terms.escalate.roles } : null,
      preview: p.preview ?? null,
      labels: p.labels ?? {},
      grantOffer: p.grant ?? null,
      grantRule: p.grantRule ?? null,
      traceParent: pause.traceParent ?? null,
      stepUp: p.terms?.step_up ?? null,
    });
    // Asked again after a state change: the approval the api refused is closed now, in this transaction.
    const replaced = p.replaces ? await closeStateChanged(db, { threadId: pause.conversationId, toolCallId: p.toolCallId, exceptId: approval.id }) : null;
    if (replaced) await linkReplaced(db, approval.id, replaced);
    opened.push({
      approvalId: approval.id, toolCallId: p.toolCallId, tool: p.tool, input: p.args, prompt, expiresAt, timeoutS, approvalsRequired: approval.terms.required,
      preview: approval.preview, labels: approval.labels, grant: approval.grantOffer, ...approversOf(approval.terms),
      ...(approval.stepUp ? { stepUp: approval.stepUp } : {}),
      ...(p.policy ? { policy: p.policy } : {}),
      ...(replaced ? { replaces: { approvalId: replaced, reason: 'state_changed' as const } } : {}),
    });
    if (pause.outbox) await enqueueApprovalEvent(db, 'approval.requested', approval.id);
  }
  return opened;
}
