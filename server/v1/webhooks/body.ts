/**
 * What an approval webhook posts (issue 26 item 3, CONTRACTS §7), pure:
 * - `json`: `{schema: "airlock.approval_webhook.v1", id, type, created_at, approval, links, note?}`,
 *   where `approval` is the v1 approval object (with approvals_required, approved_by, decisions)
 *   and `links` one `{user, url}` per designated approver who has not decided (`PUBLIC_URL/approve/
 *   {token}`, while it is pending). A link alone never decides: its page asks the approver to sign
 *   in. Without PUBLIC_URL there are no links, and `note` says so.
 * - `slack`: a Block Kit message (`text` + `KnownBlock[]` of `@slack/types`) within Slack's
 *   documented limits (asserted by tests/unit/server/v1/webhook-body.test.ts): at most 50 blocks, a
 *   header's text 150 characters, a section's 3000, a button's text 75, a URL 3000. The arguments
 *   are shown in full up to those limits, and the message says when they were cut.
 *   Buttons open the sole approver's link, else the inbox, and only with PUBLIC_URL.
 * @module
 */
import type { KnownBlock } from '@slack/types';
import type { ApprovalEventType } from '../../db/approval-outbox.ts';
import type { approvalWire } from '../serialize.ts';

export const WEBHOOK_SCHEMA = 'airlock.approval_webhook.v1';
export type WireApproval = ReturnType<typeof approvalWire>;

/** Slack's documented limits (api.slack.com/reference/block-kit). */
export const SLACK_LIMITS = { blocks: 50, headerText: 150, sectionText: 3000, buttonText: 75, url: 3000, actionId: 255, fallbackText: 4000 } as const;

export interface WebhookEvent {
  id: string;
  type: ApprovalEventType;
  createdAt: Date;
  approval: WireApproval;
}

/** Where the approval can be decided, or why there is no link. */
export function decisionPlace(publicUrl: string | undefined): { inbox: string | null; note: string } {
  if (!publicUrl) return { inbox: null, note: 'PUBLIC_URL is not set, so no link is sent: decide in Airlock\'s /approvals page.' };
  return { inbox: `${publicUrl}/approvals`, note: `Decide at ${publicUrl}/approvals (signed in).` };
}

export type Links = Array<{ user: string; url: string }>;

export function jsonBody(e: WebhookEvent, publicUrl: string | undefined, links: Links = []) {
  // The requester's own words stay in Airlock (issue 37 item 4: they are for the inbox's approvers).
  const { request_message: _words, ...approval } = e.approval;
  return {
    schema: WEBHOOK_SCHEMA,
    id: e.id,
    type: e.type,
    created_at: e.createdAt.toISOString(),
    approval,
    links,
    note: decisionPlace(publicUrl).note,
  };
}

export const CHECKPOINT_SCHEMA = 'airlock.audit_checkpoint.v1';

/**
 * A signed audit chain head (issue 36 item 3): `json`, `{schema, id, type, created_at, checkpoint:
 * {id, tenant, last_id, hash, jws, created_at}}`; `slack`, the same as one line of text. A receiver
 * that keeps them holds a copy no database writer can change (`./airlock audit verify` checks it).
 */
export function checkpointBody(
  e: { id: string; type: 'audit.checkpoint'; createdAt: Date; checkpoint: { id: string; tenant: string; last_id: string; hash: string; jws: string; created_at: string } },
  format: 'json' | 'slack',
) {
  const c = e.checkpoint;
  if (format === 'slack') return { text: `Audit checkpoint ${c.id}: tenant ${c.tenant}, row ${c.last_id}, hash ${c.hash}\n${c.jws}` };
  return { schema: CHECKPOINT_SCHEMA, id: e.id, type: e.type, created_at: e.createdAt.toISOString(), checkpoint: c };
}

const cut = (text: string, max: number, note = '…'): string => (text.length <= max ? text : text.slice(0, max - note.length) + note);

const HEADLINE: Record<ApprovalEventType, string> = {
  'approval.requested': 'Approval needed',
  'approval.progress': 'Approved by one, more needed',
  'approval.decided': 'Approval decided',
  'approval.expired': 'Approval expired',
  'approval.escalated': 'Approval waiting: escalated',
};

function statusLine(a: WireApproval): string {
  const who = a.requested_by.split(':')[1] ?? a.requested_by;
  const count = a.approvals_required > 1 ? ` · ${a.approved_by.length} of ${a.approvals_required} approved${a.approved_by.length ? ` (by ${a.approved_by.join(', ')})` : ''}` : '';
  return `*${a.tool_name}* asked by *${who}* · ${a.status}${count} · expires ${a.expires_at}`;
}

export function slackBody(e: WebhookEvent, publicUrl: string | undefined, links: Links = []): { text: string; blocks: KnownBlock[] } {
  const a = e.approval;
  const place = decisionPlace(publicUrl);
  // The sole approver's own link; with several, the inbox (each signs in there).
  const target = links.length === 1 ? links[0].url : place.inbox;
  const args = JSON.stringify(a.tool_args, null, 2);
  const fence = (body: string) => '```\n' + body + '\n```';
  const room = SLACK_LIMITS.sectionText - fence('').length;
  const argsText = args.length <= room ? fence(args) : fence(cut(args, room - 40, '\n… (cut: the full arguments are in Airlock)'));
  const blocks: KnownBlock[] = [
    // block_id names the approval (a receiver updating its message finds it; ≤ 255 characters).
    { type: 'header', block_id: `approval:${a.id}`, text: { type: 'plain_text', text: cut(`${HEADLINE[e.type]}: ${a.tool_name}`, SLACK_LIMITS.headerText) } },
    { type: 'section', text: { type: 'mrkdwn', text: cut(a.content, SLACK_LIMITS.sectionText) } },
    { type: 'section', text: { type: 'mrkdwn', text: argsText } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: cut(statusLine(a), SLACK_LIMITS.sectionText) }] },
  ];
  if (a.status === 'pending' && target) {
    blocks.push({
      type: 'actions',
      elements: [
        { type: 'button', text: { type: 'plain_text', text: 'Confirm' }, style: 'primary', url: target, action_id: `confirm:${a.id}` },
        { type: 'button', text: { type: 'plain_text', text: 'Deny' }, style: 'danger', url: target, action_id: `deny:${a.id}` },
      ],
    });
  } else if (a.status === 'pending') {
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: place.note }] });
  }
  return { text: cut(`${HEADLINE[e.type]}: ${a.tool_name} — ${a.content}`, SLACK_LIMITS.fallbackText), blocks };
}
