import { describe, expect, it } from 'vitest';
import { isMalformedMultipart } from '../../../../server/gradio/malformed-body.ts';

describe('isMalformedMultipart', () => {
  it.each([
    [new Error('Multipart: Boundary not found'), true],
    [new Error('Unexpected end of multipart data'), true],
    [new Error('Part terminated early due to unexpected end of multipart data'), true],
    [new Error('Unsupported Content-Type.'), true],
    [Object.assign(new Error('Unexpected end of multipart data'), { statusCode: 500 }), false],
    [new Error('connection reset'), false],
    ['Unexpected end of multipart data', false],
  ])('%s -> %s', (error, expected) => expect(isMalformedMultipart(error)).toBe(expected));
});
