/**
 * Edit, then approve (issue 27 item 1), as properties over random edits (fast-check):
 * - whatever the edit, and whatever happened to the stored row since (its final arguments or
 *   final hash changed behind the decision's back, the paused interrupt's arguments changed), the
 *   resume never hands the tool arguments whose action hash differs from the row's
 *   final_action_hash; a row not edited runs exactly the interrupt's arguments it bound;
 * - what the tool then runs (its schema applied to the resumed arguments) hashes the same;
 * - the JSON Patch in the audit row turns the proposed arguments into the edited ones.
 */
import fc from 'fast-check';
import jsonPatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkArguments } from '../../../../server/agent/edited-call.ts';
import { argumentsPatch, editedTerms, editOf, unseenEditRefusal } from '../../../../server/approvals/edit.ts';
import { actionHash, resumeDecisions, type DecidedRef } from '../../../../server/approvals/rules.ts';

const TOOL = 'deploy_service';
const schema = z.object({ service: z.string().min(1), version: z.string().min(1), environment: z.string().min(1) });
const value = fc.string({ minLength: 1, maxLength: 12 });
const args = fc.record({ service: value, version: value, environment: value });
const user = fc.uuid();

/** What may have happened to the stored row after the edit was approved. */
const tamper = fc.constantFrom('none', 'final_args', 'final_hash', 'drop_hash', 'drop_args', 'interrupt_args');

describe('the resume of an edited approval', () => {
  it('never runs arguments whose hash differs from final_action_hash', () => {
    fc.assert(
      fc.property(args, fc.option(args, { nil: null }), user, tamper, args, (proposed, edited, userId, how, other) => {
        const row: DecidedRef & { interruptArgs: Record<string, unknown> } = {
          interruptId: 'i1',
          decision: { approved: true },
          actionHash: actionHash({ tool: TOOL, args: proposed, userId }),
          requestedBy: userId,
          finalArgs: edited,
          finalActionHash: edited ? actionHash({ tool: TOOL, args: edited, userId }) : null,
          interruptArgs: proposed,
        };
        if (how === 'final_args' && row.finalArgs) row.finalArgs = other;
        if (how === 'final_hash' && row.finalActionHash) row.finalActionHash = actionHash({ tool: TOOL, args: other, userId });
        if (how === 'drop_hash') row.finalActionHash = null;
        if (how === 'drop_args') row.finalArgs = null;
        if (how === 'interrupt_args') row.interruptArgs = other;

        const decisions = resumeDecisions([{ interruptId: 'i1', tool: TOOL, args: row.interruptArgs }], [row])!;
        const d = decisions.i1;
        if (!d.approved) return; // refused: nothing runs
        const ran = d.args ?? row.interruptArgs;
        if (d.args) {
          // The tool applies its schema to what it is handed: that is what runs.
          const checked = checkArguments(schema, d.args);
          expect(checked.ok).toBe(true);
          expect(actionHash({ tool: TOOL, args: checked.ok ? checked.args : {}, userId })).toBe(row.finalActionHash);
        } else {
          expect(row.finalArgs ?? row.finalActionHash).toBeNull();
          expect(actionHash({ tool: TOOL, args: ran, userId })).toBe(row.actionHash);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('the patch turns the proposed arguments into the edited ones', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue()), fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue()), (a, b) => {
        const original = JSON.parse(JSON.stringify(a)) as Record<string, unknown>;
        const edited = JSON.parse(JSON.stringify(b)) as Record<string, unknown>;
        const patched = jsonPatch.applyPatch(structuredClone(original), argumentsPatch(original, edited) as Operation[]).newDocument;
        expect(patched).toEqual(edited);
      }),
    );
  });
});

describe('edit helpers', () => {
  const row = { args: { version: '1' }, actionHash: 'h0', finalArgs: { version: '2' }, finalActionHash: 'h1' };

  it('editOf names both argument sets, the patch and both hashes; nothing for a row not edited', () => {
    expect(editOf(row)).toEqual({ original_args: { version: '1' }, args: { version: '2' }, patch: [{ op: 'replace', path: '/version', value: '2' }], original_action_hash: 'h0', action_hash: 'h1' });
    expect(editOf({ ...row, finalArgs: null, finalActionHash: null })).toBeNull();
  });

  it('editedTerms: the edited call needs every term its rule says; an edit into an allowed call keeps the terms asked', () => {
    const terms = { required: 1, roles: [], users: [], distinctFromRequester: false };
    const createdAt = new Date('2026-01-01T00:00:00Z');
    const current = { terms, escalate: null, stepUp: null, expiresAt: new Date(createdAt.getTime() + 3600_000), createdAt };
    const strict = { action: 'require_approval' as const, approvals: { count: 2, roles: ['admin' as const], users: [], distinct_from_requester: true }, step_up: 'passkey' as const, timeout_s: 600, escalate: { after_s: 300, roles: ['admin' as const] } };
    expect(editedTerms(current, { action: 'require_approval', rule: strict })).toEqual({
      terms: { required: 2, roles: ['admin'], users: [], distinctFromRequester: true }, escalate: { afterS: 300, roles: ['admin'] }, stepUp: 'passkey', expiresAt: new Date(createdAt.getTime() + 600_000),
    });
    // The expiry only comes forward: a longer timeout keeps the current one; none: the configured default.
    expect(editedTerms(current, { action: 'require_approval', rule: { action: 'require_approval', timeout_s: 7200 } }).expiresAt).toEqual(current.expiresAt);
    expect(editedTerms(current, { action: 'require_approval', rule: { action: 'require_approval' } }, 60).expiresAt).toEqual(new Date(createdAt.getTime() + 60_000));
    const asked = { ...current, terms: { ...terms, required: 2 }, stepUp: 'passkey' as const };
    expect(editedTerms(asked, { action: 'allow', rule: { action: 'allow' } })).toEqual({ terms: asked.terms, escalate: null, stepUp: 'passkey', expiresAt: current.expiresAt });
    expect(editedTerms({ ...current, terms: { ...terms, roles: ['admin'] } }, { action: 'require_approval', rule: { action: 'require_approval' } }).terms).toEqual(terms);
  });

  it('checkArguments refuses unknown arguments and wrong types, field by field', () => {
    expect(checkArguments(schema, { service: 'a', version: '1', environment: 'e', force: true })).toEqual({ ok: false, fields: [{ path: '', message: 'unknown argument force' }] });
    const wrong = checkArguments(schema, { service: 'a', version: 1, environment: 'e' });
    expect(wrong.ok).toBe(false);
    expect(!wrong.ok && wrong.fields.map((f) => f.path)).toEqual(['version']);
    // A JSON schema (an MCP tool's) the same way.
    const json = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    expect(checkArguments(json, { path: '/tmp' })).toEqual({ ok: true, args: { path: '/tmp' } });
    expect(checkArguments(json, { path: '/tmp', mode: 'rw' }).ok).toBe(false);
  });

  it('unseenEditRefusal: a plain approve of an edited approval is refused where the edit is not shown', () => {
    const edited = { finalActionHash: 'h2' };
    for (const channel of ['chat', 'ag-ui', 'link', 'mcp'] as const) {
      expect(unseenEditRefusal(edited, channel, { decision: 'approve', edited: false })?.code).toBe('CONFLICT');
      // Sending the arguments is seeing them; a deny runs nothing.
      expect(unseenEditRefusal(edited, channel, { decision: 'approve', edited: true })).toBeNull();
      expect(unseenEditRefusal(edited, channel, { decision: 'deny', edited: false })).toBeNull();
    }
    for (const channel of ['v1', 'inbox'] as const) expect(unseenEditRefusal(edited, channel, { decision: 'approve', edited: false })).toBeNull();
    expect(unseenEditRefusal({ finalActionHash: null }, 'chat', { decision: 'approve', edited: false })).toBeNull();
  });
});
