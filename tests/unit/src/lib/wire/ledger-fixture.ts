/**
 * A conversation's ledger as the engine emits it, with every kind the /chat projection reads and
 * every branch of it: a user message with an attached file, an answer in partials then committed,
 * a tool call routed with caution, a refused one (FORBIDDEN: a step's error), a failed one, an
 * approval of two approvers asked, approved by one (issue 26) and decided, an answer replayed whole,
 * and a run that failed without a detail. Main's newer ledger fields the projection does not show
 * (input_seqs, retry_of) are on it as the engine writes them.
 */
import type { LiveEvent } from '../../../../../server/engine/index.ts';

export const CONVERSATION = '6f1f2d0a-3c1e-4b7a-9a53-1d2e3f4a5b6c';
const RUN = '0b6f2c1e-8a6e-4f4e-9d1c-2a3b4c5d6e7f';
const APPROVAL = '9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

let seq = 0;
/** A committed event of the fixture's run, numbered in order. */
export const committed = (kind: string, payload: Record<string, unknown>): LiveEvent =>
  ({ kind, payload: { run_id: RUN, ...payload }, seq: ++seq, conversation_id: CONVERSATION, run_id: RUN, created_at: '2026-12-05T06:00:00.000Z' }) as LiveEvent;
/** A live answer token (no seq). */
export const partial = (token: string): LiveEvent => ({ kind: 'partial', payload: { run_id: RUN, token } });

export const LEDGER_RUN: LiveEvent[] = [
  committed('user.message', {
    request_id: 'r1',
    text: 'Deploy checkout-api, here is the screenshot',
    files: [{ path: 'u1/shot.png', orig_name: 'shot.png', size: 68, kind: 'image', status: 'not_seen', note: 'The assistant cannot see images with the current model.' }],
  }),
  partial('Let me '),
  partial('check.'),
  committed('assistant.message', { text: 'Let me check.', input_seqs: [1] }),
  committed('tool.call', { tool_call_id: 't1', tool: 'check_health', input: { service: 'checkout-api' }, policy: { scope: 'default', action: 'caution', matched: false } }),
  committed('tool.result', { tool_call_id: 't1', tool: 'check_health', status: 'done', output: { ok: true }, duration_ms: 12 }),
  committed('tool.call', { tool_call_id: 't2', tool: 'list_users', input: {} }),
  committed('tool.result', { tool_call_id: 't2', tool: 'list_users', status: 'error', error: 'users:read is required', code: 'FORBIDDEN' }),
  committed('tool.call', { tool_call_id: 't3', tool: 'list_deployments', input: {} }),
  committed('tool.result', { tool_call_id: 't3', tool: 'list_deployments', status: 'error', error: 'upstream timed out', code: 'TOOL_FAILURE' }),
  partial('Deploying.'),
  committed('approval.requested', {
    approval_id: APPROVAL, tool_call_id: 't4', tool: 'deploy_service', input: { service: 'checkout-api', version: '2.4.1' },
    prompt: 'Deploy checkout-api 2.4.1?', expires_at: '2026-12-05T06:05:00.000Z', timeout_s: 300, approvals_required: 2,
  }),
  committed('approval.approved', { approval_id: APPROVAL, by: 'admin2', approved_count: 1, approvals_required: 2 }),
  committed('approval.resolved', { approval_id: APPROVAL, result: 'denied', reason: 'superseded_by_new_message' }),
  committed('assistant.message', { text: 'Not deployed.' }),
  committed('run.finished', { status: 'failed', turns: 2, duration_ms: 40, stop_reason: 'error', error_code: 'LLM_UNAVAILABLE', retry_of: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d' }),
];
