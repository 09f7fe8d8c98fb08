import { describe, expect, it } from 'vitest';
import { fileUrl } from '../../../../../src/lib/chat/download.ts';
import { formatBytes } from '../../../../../src/lib/components/format.ts';

describe('fileUrl', () => {
  it.each([
    ['relative stored path', { path: 'abc/app.log' }, '/api/agent/gradio/gradio_api/file=abc/app.log'],
    ['absolute stored path', { path: '/data/uploads/abc/my report.txt' }, '/api/agent/gradio/gradio_api/file=/data/uploads/abc/my%20report.txt'],
    ['a name with # and ?', { path: 'abc/a#b?.txt' }, '/api/agent/gradio/gradio_api/file=abc/a%23b%3F.txt'],
  ])('%s', (_name, file, url) => expect(fileUrl(file)).toBe(url));
});

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [830, '830 B'],
    [1536, '1.5 KB'],
    [2_500_000, '2.4 MB'],
  ])('%d -> %s', (bytes, text) => expect(formatBytes(bytes)).toBe(text));
});
