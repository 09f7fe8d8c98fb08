import { describe, expect, it } from 'vitest';
import { computeRoot } from '../../../../server/gradio/root-url.ts';

describe('computeRoot', () => {
  it.each([
    ['host only', { host: '127.0.0.1:3000', protocol: 'http' }, '/api/agent/gradio', undefined, 'http://127.0.0.1:3000/api/agent/gradio'],
    ['trusted https', { host: 'chat.example.com', protocol: 'https' }, '/api/agent/gradio', undefined, 'https://chat.example.com/api/agent/gradio'],
    ['a list takes the first', { host: 'a.example, b', protocol: 'HTTPS' }, '/x', undefined, 'https://a.example/x'],
    ['unknown protocol is http', { host: 'h', protocol: 'gopher' }, '/x', undefined, 'http://h/x'],
    ['trailing slash in mount path', { host: 'h', protocol: 'http' }, '/api/agent/gradio/', undefined, 'http://h/api/agent/gradio'],
    ['mounted at the top', { host: 'h:1', protocol: 'http' }, '/', undefined, 'http://h:1'],
    ['empty mount path', { host: 'h:1', protocol: 'http' }, '', undefined, 'http://h:1'],
    ['public url wins over the host', { host: 'internal:3000', protocol: 'http' }, '/g', 'https://pub.example/', 'https://pub.example/g'],
    ['public url wins over a forwarded host', { host: 'f.example', protocol: 'https' }, '/g', 'https://pub.example', 'https://pub.example/g'],
    ['hostile host -> empty root', { host: 'evil.com/"><script>', protocol: 'http' }, '/g', undefined, ''],
    ['no host at all -> empty root', { host: undefined, protocol: 'http' }, '/g', undefined, ''],
    ['IPv6 host', { host: '[::1]:8080', protocol: 'http' }, '/g', undefined, 'http://[::1]:8080/g'],
  ])('%s', (_name, request, mountPath, publicUrl, expected) => {
    const root = computeRoot({ ...request, mountPath, publicUrl });
    expect(root).toBe(expected);
    expect(root.endsWith('/')).toBe(false);
  });
});
