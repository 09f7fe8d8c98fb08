import { describe, expect, it } from 'vitest';
import { argsChanged, cardExtrasOf, labeledArgs, riskOf } from '../../../../../src/lib/chat/approval-view.ts';
import { applyChatEvent, initialView } from '../../../../../src/lib/chat/reducer.ts';

describe('approval card view (issue 27 item 4)', () => {
  it('labels the arguments, falling back to the name', () => {
    expect(labeledArgs({ service: 'checkout-api', duration_minutes: 30 }, { duration_minutes: 'Duration (minutes)' })).toEqual([
      { key: 'service', label: 'service', value: 'checkout-api' },
      { key: 'duration_minutes', label: 'Duration (minutes)', value: 30 },
    ]);
  });
  it('a production target is high risk', () => {
    expect(riskOf({ environment: 'production' })).toBe('high');
    expect(riskOf({ environment: 'staging' })).toBe('normal');
  });
  it('reads preview (null kept: "no preview"), labels and replaces from the wire', () => {
    expect(cardExtrasOf({ preview: null, labels: { a: 'A', b: 3 } })).toEqual({ preview: null, labels: { a: 'A' } });
    expect(cardExtrasOf({ preview: { summary: 's', state_hash: 'h' }, replaces: { approval_id: 'x', reason: 'state_changed' } })).toEqual({ preview: { summary: 's' }, replaces: 'x' });
    expect(cardExtrasOf({})).toEqual({});
  });
});

describe('confirm_required into the card', () => {
  it('keeps the preview and labels for the card', () => {
    const view = applyChatEvent(applyChatEvent(initialView(), { type: 'submitted', text: 'deploy' } as never), {
      type: 'message',
      message: { role: 'assistant', content: '', metadata: { type: 'confirm_required', approval_id: 'ap', tool: 'deploy_service', input: { environment: 'production' }, prompt: 'Deploy?', expires_at: null, timeout_s: 300, preview: { summary: 'x: 1 → 2', state_hash: 'h' }, labels: { environment: 'Environment' } } },
    } as never);
    expect(view.items.find((i) => i.kind === 'approval')).toMatchObject({ preview: { summary: 'x: 1 → 2' }, labels: { environment: 'Environment' } });
  });
});

describe('an edit on the card (issue 27 item 1)', () => {
  const proposed = { service: 'checkout-api', version: '6.1.0', environment: 'staging', flags: { canary: true, steps: [1, 2] } };
  it('counts a changed value, deeply, and nothing else (key order, an untouched copy)', () => {
    expect(argsChanged(proposed, null)).toBe(false);
    expect(argsChanged(proposed, { flags: { steps: [1, 2], canary: true }, environment: 'staging', version: '6.1.0', service: 'checkout-api' })).toBe(false);
    expect(argsChanged(proposed, { ...proposed, version: '6.1.1' })).toBe(true);
    expect(argsChanged(proposed, { ...proposed, flags: { canary: true, steps: [1, 3] } })).toBe(true);
    expect(argsChanged(proposed, { ...proposed, flags: { canary: true, steps: { 0: 1, 1: 2 } } })).toBe(true);
    expect(argsChanged(proposed, { ...proposed, note: '' })).toBe(true);
    expect(argsChanged(undefined, {})).toBe(false);
  });
});
