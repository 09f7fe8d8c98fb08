/**
 * The engine's events as the seed's `fastreact.agent_event.v1` (pure, table-tested). One engine
 * vocabulary (engine/events.ts) stays the source; this is its projection for headless clients:
 *
 *   (run start)        -> session_start
 *   partial            -> token (live only; `content` is the delta)
 *   assistant.message  -> token with the segment's whole text (durable replay), or error
 *   tool.call          -> tool_call          tool.result -> tool_result
 *   approval.requested -> ask_user           approval.resolved -> approval_resolved
 *   run.finished       -> session_end (status mapped: paused -> awaiting_approval)
 *   user.message       -> (none)
 * @module
 */
import type { LedgerEvent, LiveEvent } from '../engine/index.ts';
import type { RunRowStatus } from '../db/runs.ts';

export const AGENT_EVENT_SCHEMA = 'fastreact.agent_event.v1';

export interface AgentEventV1 {
  schema: typeof AGENT_EVENT_SCHEMA;
  type: string;
  event_id: string;
  parent_event_id: null;
  run_id: string;
  session_id: string | null;
  timestamp: string;
  /**
   * Per run, from 1, as /runs/{id}/events replays it. Live, a committed event has the same number;
   * a token delta has the number of the replayed event that records its text (liveNumbering).
   */
  sequence: number;
  content?: string;
  tool_name?: string;
  tool_args?: unknown;
  tool_call_id?: string;
  duration_ms?: number | null;
  approval_request_id?: string;
  status?: string;
  metadata: Record<string, unknown>;
}

export interface EventScope {
  runId: string;
  sessionId: string | null;
}

const TURN_STATUS: Record<RunRowStatus, string> = { running: 'running', paused: 'awaiting_approval', done: 'completed', failed: 'failed', cancelled: 'cancelled' };

type Body = Omit<AgentEventV1, 'schema' | 'event_id' | 'parent_event_id' | 'run_id' | 'session_id' | 'timestamp' | 'sequence'>;

export function envelope(scope: EventScope, sequence: number, timestamp: string, body: Body): AgentEventV1 {
  return { schema: AGENT_EVENT_SCHEMA, event_id: `${scope.runId}:${sequence}`, parent_event_id: null, run_id: scope.runId, session_id: scope.sessionId, timestamp, sequence, ...body };
}

export function sessionStartBody(input: { text: string; userKey: string; metadata: Record<string, unknown> }): Body {
  return { type: 'session_start', content: input.text, metadata: { ...input.metadata, user_key: input.userKey } };
}

/** The body of a committed event, or null for kinds headless clients do not see. */
export function ledgerBody(event: LedgerEvent, options: { live: boolean }): Body | null {
  switch (event.kind) {
    case 'user.message':
    case 'branch.forked': // issue 29: headless runs never fork; a session's branch is in GET /runs/{id}
    case 'branch.switched':
      return null;
    case 'assistant.message': {
      const p = event.payload;
      if (p.error) return { type: 'error', content: p.error.detail, metadata: { code: p.error.code, partial_content: p.text } };
      // Live clients got this text as token deltas already.
      if (options.live || !p.text) return null;
      return { type: 'token', content: p.text, metadata: p.cancelled ? { cancelled: true } : {} };
    }
    case 'tool.call':
      return {
        type: 'tool_call',
        tool_name: event.payload.tool,
        tool_args: event.payload.input,
        tool_call_id: event.payload.tool_call_id,
        metadata: event.payload.policy ? policyMetadata(event.payload.policy) : {},
      };
    case 'tool.result': {
      const p = event.payload;
      const content = p.status === 'done' ? (typeof p.output === 'string' ? p.output : JSON.stringify(p.output ?? null)) : (p.error ?? '');
      return {
        type: 'tool_result',
        tool_name: p.tool,
        tool_call_id: p.tool_call_id,
        content,
        duration_ms: p.duration_ms ?? null,
        status: p.status === 'done' ? 'success' : 'error',
        metadata: p.status === 'done' ? {} : { error_code: p.code ?? null },
      };
    }
    case 'approval.requested': {
      // The policy decision that paused the call (server/policy); absent in events stored before
      // the policy file existed, when the built-in rule was the only one.
      const p = event.payload;
      return {
        type: 'ask_user',
        content: p.prompt,
        approval_request_id: p.approval_id,
        tool_name: p.tool,
        tool_args: p.input,
        metadata: {
          request_id: p.approval_id,
          decision_level: 'danger',
          timeout_seconds: p.timeout_s,
          expires_at: p.expires_at,
          ...policyMetadata(p.policy ?? { scope: 'builtin', action: 'require_approval', matched: false }),
          preview: p.preview ?? null,
          labels: p.labels ?? {},
          grantable: p.grantable ?? null,
          ...(p.replaces ? { replaces: p.replaces } : {}),
        },
      };
    }
    case 'approval.approved': {
      // One approver of several approved (issue 26): still pending, with how many are needed.
      const p = event.payload;
      return { type: 'approval_progress', approval_request_id: p.approval_id, status: 'pending', metadata: { by: p.by, approved_count: p.approved_count, approvals_required: p.approvals_required } };
    }
    case 'approval.resolved':
      return { type: 'approval_resolved', approval_request_id: event.payload.approval_id, status: event.payload.result, metadata: { result: event.payload.result } };
    case 'run.finished': {
      const p = event.payload;
      return {
        type: 'session_end',
        status: TURN_STATUS[p.status],
        duration_ms: p.duration_ms,
        metadata: { stop_reason: p.stop_reason, turns: p.turns, error_code: p.error_code, ...(p.error_detail ? { error_detail: p.error_detail } : {}) },
      };
    }
  }
}

/** The durable events of a run: session_start, then each of its turns' committed events. */
export function durableEvents(scope: EventScope, start: { createdAt: Date; text: string; userKey: string; metadata: Record<string, unknown> }, ledger: LedgerEvent[]): AgentEventV1[] {
  const events = [envelope(scope, 1, start.createdAt.toISOString(), sessionStartBody(start))];
  for (const e of ledger) {
    const body = ledgerBody(e, { live: false });
    if (body) events.push(envelope(scope, events.length + 1, e.created_at, body));
  }
  return events;
}

/** Maps one live event (stream: true) to the body it sends, or null. */
export function liveBody(event: LiveEvent): Body | null {
  if (event.kind === 'partial') return { type: 'token', content: event.payload.token, metadata: {} };
  return ledgerBody(event, { live: true });
}

/**
 * Numbers a live run's events (after its session_start, 1) exactly as durableEvents numbers the
 * replay, so the same event has the same `sequence` live and in /runs/{id}/events. A committed
 * event gets its durable number. A token delta gets the number of the durable event that will
 * record its text: the segment's `token` (the assistant.message committed after the deltas, before
 * anything else of the run), or the `error` that cut the segment; so the deltas of one segment share
 * a number, and merged they are the replayed event. Returns null for what clients do not see.
 */
export function liveNumbering(scope: EventScope): (event: LiveEvent, timestamp?: string) => AgentEventV1 | null {
  let durable = 1;
  let segment: number | null = null;
  return (event, timestamp = new Date().toISOString()) => {
    if (event.kind === 'partial') {
      segment ??= durable + 1;
      return envelope(scope, segment, timestamp, { type: 'token', content: event.payload.token, metadata: {} });
    }
    if (ledgerBody(event, { live: false })) durable++;
    if (event.kind === 'assistant.message') segment = null;
    const body = ledgerBody(event, { live: true });
    return body ? envelope(scope, durable, event.created_at, body) : null;
  };
}

/** Pure paging over a run's events by sequence (seed: count, total_event_count, next_after_sequence, has_more). */
export function pageEvents(events: AgentEventV1[], afterSequence: number, limit: number) {
  const rest = events.filter((e) => e.sequence > afterSequence);
  const page = rest.slice(0, limit);
  return {
    events: page,
    count: page.length,
    total_event_count: events.length,
    next_after_sequence: page.at(-1)?.sequence ?? afterSequence,
    has_more: rest.length > page.length,
  };
}

/** The seed's policy fields of an event's metadata, from the ledger's policy decision. */
function policyMetadata(policy: { scope: string; action: string; matched: boolean }) {
  return { policy_scope: policy.scope, policy_action: policy.action, policy_matched: policy.matched };
}
