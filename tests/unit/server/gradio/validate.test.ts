import { describe, expect, it } from 'vitest';
import { isRejection, normalizeInputs, parseEnvelope } from '../../../../server/gradio/validate.ts';
import type { EndpointDefinition } from '../../../../server/gradio/types.ts';

const endpoint: EndpointDefinition = {
  apiName: 'e',
  inputs: [
    { name: 'message', label: 'Message', component: 'textbox' },
    { name: 'count', label: 'Count', component: 'number', default: 3 },
    { name: 'extra', label: 'Extra', component: 'json', default: null },
  ],
  outputs: [{ label: 'Out', component: 'json' }],
  handler: async () => [null],
};

describe('parseEnvelope', () => {
  it.each([
    ['no session_hash', { fn_index: 1, data: [] }, 400],
    ['empty session_hash', { fn_index: 1, session_hash: '', data: [] }, 400],
    ['no fn_index', { session_hash: 's', data: [] }, 400],
    ['fn_index not an integer', { session_hash: 's', fn_index: '1', data: [] }, 400],
    ['data not an array', { session_hash: 's', fn_index: 1, data: 'x' }, 422],
    ['not an object', [1], 400],
  ])('%s -> %i', (_n, body, status) => {
    const result = parseEnvelope(body);
    expect(isRejection(result) && result.status).toBe(status);
  });

  it('keeps event_data verbatim and defaults it to null', () => {
    expect(parseEnvelope({ session_hash: 's', fn_index: 1, data: ['a'], event_data: ['c', null] })).toEqual({ fnIndex: 1, sessionHash: 's', data: ['a'], eventData: ['c', null] });
    expect(parseEnvelope({ session_hash: 's', fn_index: 1, data: [] })).toMatchObject({ eventData: null });
  });
});

describe('normalizeInputs', () => {
  it('applies defaults for missing and null values', () => {
    expect(normalizeInputs(endpoint, ['hi'])).toEqual(['hi', 3, null]);
    expect(normalizeInputs(endpoint, ['hi', null, null])).toEqual(['hi', 3, null]);
    expect(normalizeInputs(endpoint, ['hi', 5, { a: 1 }])).toEqual(['hi', 5, { a: 1 }]);
  });

  it('rejects too many values with 422', () => {
    expect(normalizeInputs(endpoint, ['a', 1, 2, 3])).toEqual({ status: 422, detail: 'The endpoint /e takes 3 input value(s), got 4.' });
  });

  it('rejects a missing required value with the client wording', () => {
    expect(normalizeInputs(endpoint, [])).toEqual({ status: 422, detail: 'No value provided for required parameter: message', parameter: 'message' });
  });

  it('rejects wrong types with 422', () => {
    const result = normalizeInputs(endpoint, [42]);
    expect(isRejection(result) && result.status).toBe(422);
    expect(isRejection(result) && result.detail).toMatch(/message must be of type "string", got integer/);
    expect(isRejection(result) && result.parameter).toBe('message');
    expect(isRejection(normalizeInputs(endpoint, ['a', 'three']))).toBe(true);
  });
});
