import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../../../server/errors.ts';
import { errorText, isRetryable, toErrorCode } from '../../../../../src/lib/chat/errors.ts';

// The UI reads the server's own table (src/lib/wire/errors.ts): every code the server may send
// has its own sentence for people and the same retryable flag; anything else reads as INTERNAL.
describe("the UI error taxonomy is the server's", () => {
  it.each(Object.keys(ERROR_CODES) as Array<keyof typeof ERROR_CODES>)('%s', (code) => {
    expect(toErrorCode(code)).toBe(code);
    if (code !== 'INTERNAL') expect(errorText(code)).not.toBe(errorText('INTERNAL'));
    expect(isRetryable(code)).toBe(ERROR_CODES[code].retryable);
  });

  it('reads an unknown or missing code as INTERNAL', () => {
    for (const code of ['WHAT', 'toString', '', undefined]) expect(toErrorCode(code)).toBe('INTERNAL');
    expect(errorText('WHAT')).toBe(errorText('INTERNAL'));
  });
});
