import { describe, expect, it } from 'vitest';
import { cleanModelTitle, MODEL_TITLE_INPUT_CHARS, MODEL_TITLE_SYSTEM, modelTitlePrompt } from '../../../../server/engine/model-title.ts';
import { TITLE_MAX_CHARS, TITLE_MAX_WORDS } from '../../../../server/engine/title-rule.ts';

describe('cleanModelTitle (a real model reply as a title)', () => {
  const table: Array<[reply: string, title: string]> = [
    ['Payments API health check', 'Payments API health check'],
    ['"Payments API health check."', 'Payments API health check'],
    ['Title: Payments API health check', 'Payments API health check'],
    ['**Title:** "Payments API health check."', 'Payments API health check'],
    ["Here's a title: 'Staging deploy'", 'Staging deploy'],
    ['“Quarterly report”.', 'Quarterly report'],
    ['# Deploy checkout-api 2.4.1 to staging\n\nThis title sums up the request.', 'Deploy checkout-api 2.4.1 to staging'],
    ['Title:\nPayments health', 'Payments health'],
    ['\n\n  Payments   health  \n', 'Payments health'],
    ['- `db-primary` maintenance window', 'db-primary maintenance window'],
    ['Why is checkout slow?', 'Why is checkout slow?'],
    ['iOS crash reports!', 'iOS crash reports'],
    ['<think>The user asks about latency.</think>\nCheckout latency', 'Checkout latency'],
    ['Payments\u202E health\u0007', 'Payments health'],
  ];
  it.each(table)('%j -> %j', (reply, title) => {
    expect(cleanModelTitle(reply)).toBe(title);
  });

  it.each(['', '   \n ', '""', 'Title:', '**', '<think>thoughts cut off by the token cap'])('%j leaves nothing (the rule title stays)', (reply) => {
    expect(cleanModelTitle(reply)).toBe('');
  });

  it('cuts a long reply to the title caps', () => {
    const words = cleanModelTitle('A very long title that goes on and on about the checkout latency');
    expect(words.split(' ').length).toBeLessThanOrEqual(TITLE_MAX_WORDS);
    expect(words.endsWith('…')).toBe(true);
    const chars = cleanModelTitle('x'.repeat(300));
    expect(chars.length).toBeLessThanOrEqual(TITLE_MAX_CHARS);
    expect(chars.endsWith('…')).toBe(true);
  });
});

describe('modelTitlePrompt', () => {
  it('asks for the title only, with the first message and the answer', () => {
    const prompt = modelTitlePrompt('why is checkout slow?', 'The p99 latency of checkout-api doubled.');
    expect(prompt.system).toBe(MODEL_TITLE_SYSTEM);
    expect(prompt.user).toBe('First message:\nwhy is checkout slow?\n\nAnswer:\nThe p99 latency of checkout-api doubled.');
  });

  it('cuts the first message and the answer to MODEL_TITLE_INPUT_CHARS each', () => {
    const message = 'm'.repeat(5000);
    const answer = 'a'.repeat(5000);
    const { user } = modelTitlePrompt(message, answer);
    const [first, second] = user.split('\n\nAnswer:\n');
    const cutMessage = first.replace('First message:\n', '');
    expect(cutMessage).toHaveLength(MODEL_TITLE_INPUT_CHARS);
    expect(cutMessage.endsWith('…')).toBe(true);
    expect(second).toHaveLength(MODEL_TITLE_INPUT_CHARS);
    expect(user.length).toBeLessThan(2 * MODEL_TITLE_INPUT_CHARS + 40);
  });

  it('never cuts inside a surrogate pair', () => {
    const { user } = modelTitlePrompt('🙂'.repeat(MODEL_TITLE_INPUT_CHARS), '');
    const message = user.split('\n\nAnswer:\n')[0].replace('First message:\n', '');
    expect(message.endsWith('🙂…')).toBe(true);
    expect(message.length).toBeLessThanOrEqual(MODEL_TITLE_INPUT_CHARS);
  });

  it('a message of files only: the answer names it', () => {
    expect(modelTitlePrompt('  ', 'This PDF is a runbook.').user).toBe('First message:\n(only attached files)\n\nAnswer:\nThis PDF is a runbook.');
  });
});
