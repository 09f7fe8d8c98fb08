import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../../../server/errors.ts';
import { errorText, isRetryable, toErrorCode } from '../../../../../src/lib/chat/errors.ts';

// The UI mirrors the server's taxonomy (the browser bundle cannot import it): every code the
// server may send has its own sentence and the same retryable flag.
describe('the UI error taxonomy mirrors the server', () => {
  it.each(Object.keys(ERROR_CODES) as Array<keyof typeof ERROR_CODES>)('%s', (code) => {
    expect(toErrorCode(code)).toBe(code);
    if (code !== 'INTERNAL') expect(errorText(code)).not.toBe(errorText('INTERNAL'));
    expect(isRetryable(code)).toBe(ERROR_CODES[code].retryable);
  });
});
