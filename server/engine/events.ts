/**
 * The one event vocabulary of a conversation: the live stream, the ledger and history speak it.
 * Committed kinds land in the ledger with a gap-free `seq`; `partial` (answer tokens) is live only
 * and never written. Payload keys are snake_case because they are wire keys. Every payload
 * carries the `run_id` of the run that produced it.
 * @module
 */
import { z } from 'zod';
import { APPROVAL_REASONS } from '../approvals/rules.ts';
import { ArgumentLabelsSchema, ArgumentsEditSchema, EffectPreviewSchema, ErrorFieldSchema, GrantMadeSchema, GrantOfferSchema, ApproversSchema } from '../../src/lib/wire/chat-metadata.ts';
import { branchPath, onPath, type BranchFork } from '../../src/lib/wire/branches.ts';

const RunId = z.uuid();
/** A file on a user message, with what the model got of it (engine/attachments.ts ReportedFileRef). */
const FileRefSchema = z.strictObject({
  path: z.string().min(1),
  orig_name: z.string().optional(),
  size: z.number().optional(),
  mime_type: z.string().optional(),
  url: z.string().optional(),
  kind: z.string().optional(),
  status: z.string().optional(),
  note: z.string().optional(),
});

/** The tool policy decision that routed a call (server/policy): `caution` is flagged here. */
const PolicySchema = z.strictObject({ scope: z.string().min(1), action: z.enum(['allow', 'caution', 'require_approval', 'deny']), matched: z.boolean() });

/** A call run under a standing grant (issue 27): its id, who made it and until when (the tool card says so). */
const GRANT_USE = { grant_id: z.uuid().optional(), grant_by: z.string().optional(), grant_until: z.iso.datetime({ offset: true }).optional() };

/** A branch of the conversation (issue 29): on every payload, absent meaning 0. */
const Branch = z.number().int().nonnegative();

/** Payload schema per committed kind. Unknown keys are refused: a bad payload never lands. */
const KIND_PAYLOADS = {
  'user.message': z.strictObject({
    run_id: RunId,
    request_id: z.string().min(1),
    text: z.string(),
    files: z.array(FileRefSchema),
    /** The client's own id of the message (AG-UI Message.id, issue 24); absent when it sent none. */
    client_message_id: z.string().min(1).max(256).optional(),
    /** Seed 001's word: written for the next turn (an edge write, a queued message; `guide` is written as queue). Absent: it started its turn. */
    delivery: z.literal('queue').optional(),
  }),
  'tool.call': z.strictObject({ run_id: RunId, tool_call_id: z.string().min(1), tool: z.string().min(1), input: z.unknown(), policy: PolicySchema.optional(), ...GRANT_USE }),
  'tool.result': z.strictObject({
    run_id: RunId,
    tool_call_id: z.string().min(1),
    tool: z.string().min(1),
    status: z.enum(['done', 'error']),
    output: z.unknown().optional(),
    error: z.string().optional(),
    code: z.string().optional(),
    duration_ms: z.number().int().nonnegative().optional(),
    /** The grant the call ran under, without a card (issue 27). */
    ...GRANT_USE,
  }),
  'approval.requested': z.strictObject({
    run_id: RunId,
    approval_id: z.uuid(),
    /** The paused tool call (AG-UI's Interrupt.toolCallId); absent on events older than it. */
    tool_call_id: z.string().min(1).optional(),
    tool: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    prompt: z.string(),
    expires_at: z.iso.datetime({ offset: true }),
    timeout_s: z.number().int().positive(),
    policy: PolicySchema.optional(),
    /** How many approvers it needs, when more than one (issue 26). */
    approvals_required: z.number().int().min(2).optional(),
    /** Who may give them: the rule's roles and usernames (issue 37 item 4: "Waiting for one more from: …"). */
    approvers: ApproversSchema.optional(),
    /** Approving needs the approver's passkey (issue 28 step-up). */
    step_up: z.literal('passkey').optional(),
    /** The effect's preview, null when the tool has none (issue 27); absent on older events. */
    preview: EffectPreviewSchema.nullable().optional(),
    /** Human labels of the arguments (issue 27). */
    labels: ArgumentLabelsSchema.optional(),
    /** The approval of the same call that a state change closed (denied / state_changed). */
    replaces: z.strictObject({ approval_id: z.uuid(), reason: z.literal('state_changed') }).optional(),
    /** The grant its approver may make (issue 27); null: not grantable; absent on older events. */
    grantable: GrantOfferSchema.nullable().optional(),
  }),
  // One approver's approval of an M-of-N approval that stays pending (issue 26; wire confirm_progress).
  // `by` is the approver's username. approval.resolved stays terminal only.
  'approval.approved': z.strictObject({ run_id: RunId, approval_id: z.uuid(), by: z.string().min(1), approved_count: z.number().int().positive(), approvals_required: z.number().int().positive() }),
  // `reason` (issue 23): absent on events written before it.
  // `edited` (issue 27 item 1): confirmed with the arguments edited; the original, the edited, the
  // RFC 6902 patch between them, and both action hashes. `by` (issue 37 item 3): the decider's
  // username (absent on an expiry, a state change's closing, and events written before it).
  'approval.resolved': z.strictObject({
    run_id: RunId, approval_id: z.uuid(), result: z.enum(['confirmed', 'denied', 'expired']), reason: z.enum(APPROVAL_REASONS).optional(), by: z.string().min(1).optional(),
    edited: ArgumentsEditSchema.extend({ original_action_hash: z.string().nullable(), action_hash: z.string() }).optional(),
    // The standing grant the confirm made (issue 37 item 6): the card and the history say so.
    grant_made: GrantMadeSchema.optional(),
  }),
  'assistant.message': z.strictObject({
    run_id: RunId,
    text: z.string(),
    /** The user.message seqs this answer was given for (seed 001's inputSeqs); absent on events older than it. */
    input_seqs: z.array(z.number().int().positive()).optional(),
    cancelled: z.literal(true).optional(),
    error: z.strictObject({ code: z.string(), detail: z.string() }).optional(),
  }),
  'run.finished': z.strictObject({
    run_id: RunId,
    status: z.enum(['done', 'paused', 'failed', 'cancelled']),
    turns: z.number().int().nonnegative(),
    duration_ms: z.number().int().nonnegative(),
    stop_reason: z.string().min(1),
    error_code: z.string().nullable(),
    error_detail: z.string().optional(),
    /** The arguments a VALIDATION_ERROR is about (a confirm's edited arguments), by path; /chat says them as `fields`. */
    error_fields: z.array(ErrorFieldSchema).optional(),
    /** The dead turn a retry took over from (issue 30): it resumed that turn's thread with no new message. */
    retry_of: RunId.optional(),
  }),
  // Edit or Regenerate forked the conversation (issue 29): `branch` shows the parent's events
  // before `from_seq` (a seq of this ledger), then its own. It is the active branch from here on.
  'branch.forked': z.strictObject({ run_id: RunId, from_seq: z.number().int().positive(), parent_branch: Branch }),
  // The conversation shows, and continues on, `branch` from here on (the branch switch `‹ 1/2 ›`).
  'branch.switched': z.strictObject({ run_id: RunId }),
} as const;

type WithBranch<T> = { [K in keyof T]: T[K] extends z.ZodObject<infer S> ? z.ZodObject<S & { branch: z.ZodOptional<typeof Branch> }, z.core.$strict> : never };

/** Every kind's payload, each with `branch` (absent: 0; the turn stamps it when not 0). */
export const PAYLOADS = Object.fromEntries(Object.entries(KIND_PAYLOADS).map(([kind, schema]) => [kind, schema.extend({ branch: Branch.optional() })])) as unknown as WithBranch<typeof KIND_PAYLOADS>;

/** The branch an event belongs to. */
export const branchOf = (payload: { branch?: number }): number => payload.branch ?? 0;

export type EventKind = keyof typeof PAYLOADS;
export const EVENT_KINDS = Object.keys(PAYLOADS) as EventKind[];
export type Payload<K extends EventKind> = z.infer<(typeof PAYLOADS)[K]>;

/** An event about to be committed: kind and payload, no seq yet. */
export type EventDraft = { [K in EventKind]: { kind: K; payload: Payload<K> } }[EventKind];

/** A committed ledger event. */
export type LedgerEvent = EventDraft & { seq: number; conversation_id: string; run_id: string; created_at: string };

/** A live-only answer token (never in the ledger, never moves a cursor). */
export interface PartialEvent {
  kind: 'partial';
  payload: { run_id: string; token: string };
}

/** What a live subscriber receives: committed events and partial tokens, in order. */
export type LiveEvent = LedgerEvent | PartialEvent;

export type RunStatus = Payload<'run.finished'>['status'];

export class LedgerPayloadError extends Error {
  override readonly name = 'LedgerPayloadError';
}

/** Validates a draft against its kind's schema; throws LedgerPayloadError (nothing lands). */
export function validateDraft(draft: { kind: string; payload: unknown }): EventDraft {
  const schema = (PAYLOADS as Record<string, z.ZodType>)[draft.kind];
  if (!schema) throw new LedgerPayloadError(`unknown event kind "${draft.kind}"`);
  const result = schema.safeParse(draft.payload);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new LedgerPayloadError(`${draft.kind}: ${issue?.path.join('.') || 'payload'}: ${issue?.message ?? 'invalid'}`);
  }
  return { kind: draft.kind, payload: result.data } as EventDraft;
}

/**
 * The events a conversation shows on its active branch (issue 29), and that branch: the last
 * branch.forked or branch.switched names it, and each branch.forked says where it left its
 * parent. A conversation that never forked shows every event, on branch 0.
 */
export function activeBranchEvents(events: readonly LedgerEvent[]): { branch: number; events: LedgerEvent[] } {
  const forks: BranchFork[] = [];
  let branch = 0;
  for (const e of events) {
    if (e.kind === 'branch.forked') forks.push({ branch: branchOf(e.payload), parent: e.payload.parent_branch, from: e.payload.from_seq });
    if (e.kind === 'branch.forked' || e.kind === 'branch.switched') branch = branchOf(e.payload);
  }
  if (forks.length === 0) return { branch, events: [...events] };
  const path = branchPath(forks, branch);
  return { branch, events: events.filter((e) => e.kind.startsWith('branch.') || onPath(path, branchOf(e.payload), e.seq)) };
}

export function isCommitted(event: LiveEvent): event is LedgerEvent {
  return event.kind !== 'partial';
}
