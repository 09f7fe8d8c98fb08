/**
 * Approval webhooks, the pure parts (issue 26 item 3): APPROVAL_WEBHOOKS, the signature, the JSON
 * body and the Slack Block Kit message within Slack's documented limits, the backoff.
 */
import type { KnownBlock } from '@slack/types';
import { describe, expect, it } from 'vitest';
import { nextAttemptAt, MAX_ATTEMPTS } from '../../../../server/v1/webhooks/delivery.ts';
import { jsonBody, slackBody, SLACK_LIMITS, WEBHOOK_SCHEMA, type WireApproval } from '../../../../server/v1/webhooks/body.ts';
import { parseWebhooks, WebhookSettingsError } from '../../../../server/v1/webhooks/settings.ts';
import { signWebhook, verifyWebhook } from '../../../../server/v1/webhooks/sign.ts';

const approval = (over: Partial<WireApproval> = {}): WireApproval => ({
  approval_request_id: 'a1', id: 'a1', status: 'pending', approved: false, expired: false, timeout_seconds: 300, created_at: '2026-12-05T00:00:00.000Z',
  expires_at: '2026-12-05T00:05:00.000Z', resolved_at: null, resolution_reason: null, policy_scope: 'tool:deploy_service', policy_action: 'require_approval',
  policy_matched: true, requested_by: 'demo:admin', resolved_by: null, tool_name: 'deploy_service', tool_args: { service: 'web', version: '1.2.3', environment: 'production' },
  content: 'Deploy web 1.2.3 to production?', run_id: null, session_id: 'c1', approvals_required: 2, approved_by: ['admin2'], edited_args: null,
  decisions: [{ user: 'admin2', decision: 'approve', decided_at: '2026-12-05T00:01:00.000Z', channel: 'inbox' }], preview: null, labels: {}, replaces: null, grantable: null, grant_id: null, step_up: null, action_hash: null,
  approvers: { roles: ['admin', 'operator'], users: [] }, request_message: 'please ship web now', ...over,
});
const event = (over: Partial<WireApproval> = {}) => ({ id: 'e1', type: 'approval.requested' as const, createdAt: new Date('2026-12-05T00:00:01Z'), approval: approval(over) });

describe('parseWebhooks', () => {
  it('reads the list with defaults', () => {
    expect(parseWebhooks('[{"url":"https://hooks.example/a","secret":"0123456789abcdef"}]', 'inline')).toEqual([{ url: 'https://hooks.example/a', secret: '0123456789abcdef', format: 'json' }]);
  });
  it.each([
    ['not JSON', '[{', /not valid JSON/],
    ['a short secret', '[{"url":"https://h.example","secret":"short"}]', /0\.secret/],
    ['an unknown format', '[{"url":"https://h.example","secret":"0123456789abcdef","format":"teams"}]', /0\.format/],
    ['an unknown event', '[{"url":"https://h.example","secret":"0123456789abcdef","events":["approval.maybe"]}]', /0\.events\.0/],
    ['an unknown key', '[{"url":"https://h.example","secret":"0123456789abcdef","retries":3}]', /retries/],
    ['not http', '[{"url":"ftp://h.example","secret":"0123456789abcdef"}]', /0\.url/],
  ])('refuses %s', (_name, text, what) => {
    expect(() => parseWebhooks(text, 'inline')).toThrow(WebhookSettingsError);
    expect(() => parseWebhooks(text, 'inline')).toThrow(what);
  });
});

describe('the signature (t=…,v1=… over "<t>.<body>")', () => {
  it('is the HMAC-SHA256 a receiver recomputes, and refuses another body, secret or an old t', () => {
    const header = signWebhook('0123456789abcdef', 1_700_000_000, '{"a":1}');
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook('0123456789abcdef', header, '{"a":1}', 1_700_000_010)).toBe(true);
    expect(verifyWebhook('0123456789abcdef', header, '{"a":2}', 1_700_000_010)).toBe(false);
    expect(verifyWebhook('fedcba9876543210', header, '{"a":1}', 1_700_000_010)).toBe(false);
    expect(verifyWebhook('0123456789abcdef', header, '{"a":1}', 1_700_001_000)).toBe(false);
  });
});

describe('jsonBody', () => {
  it('names and versions the document, carries the approval and no deciding token', () => {
    const body = jsonBody(event(), undefined);
    expect(body).toMatchObject({ schema: WEBHOOK_SCHEMA, id: 'e1', type: 'approval.requested', approval: { approvals_required: 2, approved_by: ['admin2'] }, links: [] });
    expect(body.note).toMatch(/PUBLIC_URL is not set, so no link is sent/);
    // The requester's own words are for the inbox's approvers, not for a webhook (issue 37 item 4).
    expect(body.approval).not.toHaveProperty('request_message');
    expect(JSON.stringify(body)).not.toContain('please ship web now');
    expect(jsonBody(event(), 'https://airlock.example').note).toBe('Decide at https://airlock.example/approvals (signed in).');
  });
});

/** Slack's documented structure and limits for the blocks we send (api.slack.com/reference/block-kit). */
function assertBlockKit(message: { text: string; blocks: KnownBlock[] }) {
  expect(message.text.length).toBeGreaterThan(0);
  expect(message.text.length).toBeLessThanOrEqual(SLACK_LIMITS.fallbackText);
  expect(message.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
  for (const block of message.blocks) {
    if (block.block_id !== undefined) expect(block.block_id.length).toBeLessThanOrEqual(SLACK_LIMITS.actionId);
    if (block.type === 'header') {
      expect(block.text.type).toBe('plain_text');
      expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
    } else if (block.type === 'section') {
      expect(block.text!.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    } else if (block.type === 'context') {
      expect(block.elements.length).toBeLessThanOrEqual(10);
      for (const e of block.elements) if ('text' in e && typeof e.text === 'string') expect(e.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    } else if (block.type === 'actions') {
      expect(block.elements.length).toBeLessThanOrEqual(25);
      for (const e of block.elements) {
        expect(e.type).toBe('button');
        if (e.type !== 'button') continue;
        expect(e.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.buttonText);
        expect(e.url!.length).toBeLessThanOrEqual(SLACK_LIMITS.url);
        expect(e.action_id!.length).toBeLessThanOrEqual(SLACK_LIMITS.actionId);
      }
      expect(new Set(block.elements.map((e) => (e as { action_id: string }).action_id)).size).toBe(block.elements.length);
    } else throw new Error(`unexpected block ${block.type}`);
  }
}

describe('slackBody (Block Kit, typed KnownBlock[])', () => {
  it('a pending approval with PUBLIC_URL: header, prompt, arguments, status "1 of 2", Confirm/Deny opening the inbox', () => {
    const message = slackBody(event(), 'https://airlock.example');
    assertBlockKit(message);
    expect(message.blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'context', 'actions']);
    expect(JSON.stringify(message.blocks[3])).toContain('1 of 2 approved (by admin2)');
    const actions = message.blocks[4] as Extract<KnownBlock, { type: 'actions' }>;
    expect(actions.elements.map((e) => (e as { url: string }).url)).toEqual(['https://airlock.example/approvals', 'https://airlock.example/approvals']);
  });
  it('without PUBLIC_URL: no buttons, and the message says why', () => {
    const message = slackBody(event(), undefined);
    assertBlockKit(message);
    expect(message.blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(JSON.stringify(message.blocks.at(-1))).toContain('PUBLIC_URL is not set');
  });
  it('huge arguments and a long tool name stay within the limits, and say they were cut', () => {
    const message = slackBody(event({ tool_name: 'x'.repeat(400), content: 'y'.repeat(5000), tool_args: { blob: 'z'.repeat(10_000) } }), 'https://airlock.example');
    assertBlockKit(message);
    expect(JSON.stringify(message.blocks[2])).toContain('cut: the full arguments are in Airlock');
  });
  it('a decided approval has no buttons', () => {
    expect(slackBody({ ...event({ status: 'approved' }), type: 'approval.decided' }, 'https://airlock.example').blocks.some((b) => b.type === 'actions')).toBe(false);
  });
});

describe('nextAttemptAt', () => {
  const now = new Date('2026-12-05T00:00:00Z');
  it('backs off 1 s doubling up to 5 min, and gives up at the last attempt', () => {
    expect(nextAttemptAt(1, now)!.getTime() - now.getTime()).toBe(1000);
    expect(nextAttemptAt(4, now)!.getTime() - now.getTime()).toBe(8000);
    expect(nextAttemptAt(15, now)!.getTime() - now.getTime()).toBe(300_000);
    expect(nextAttemptAt(MAX_ATTEMPTS, now)).toBeNull();
  });
  it('the same schedule from another first delay (APPROVAL_WEBHOOK_RETRY_MS)', () => {
    expect(nextAttemptAt(1, now, 100)!.getTime() - now.getTime()).toBe(100);
    expect(nextAttemptAt(4, now, 100)!.getTime() - now.getTime()).toBe(800);
    expect(nextAttemptAt(15, now, 100)!.getTime() - now.getTime()).toBe(30_000);
    expect(nextAttemptAt(MAX_ATTEMPTS, now, 100)).toBeNull();
  });
});
