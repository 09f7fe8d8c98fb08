import { describe, expect, it } from 'vitest';
import { computeRoot } from '../../../../server/gradio/root-url.ts';

describe('computeRoot', () => {
  it.each([
    ['Host only', { host: '127.0.0.1:3000' }, '/api/agent/gradio', undefined, 'http://127.0.0.1:3000/api/agent/gradio'],
    ['forwarded host and proto', { host: 'node:7860', 'x-forwarded-host': 'chat.example.com', 'x-forwarded-proto': 'https' }, '/api/agent/gradio', undefined, 'https://chat.example.com/api/agent/gradio'],
    ['forwarded lists take the first', { 'x-forwarded-host': 'a.example, b', 'x-forwarded-proto': 'https, http' }, '/x', undefined, 'https://a.example/x'],
    ['trailing slash in mount path', { host: 'h' }, '/api/agent/gradio/', undefined, 'http://h/api/agent/gradio'],
    ['mounted at the top', { host: 'h:1' }, '/', undefined, 'http://h:1'],
    ['empty mount path', { host: 'h:1' }, '', undefined, 'http://h:1'],
    ['public url when not forwarded', { host: 'internal:3000' }, '/g', 'https://pub.example/', 'https://pub.example/g'],
    ['forwarded beats public url', { 'x-forwarded-host': 'f.example' }, '/g', 'https://pub.example', 'http://f.example/g'],
    ['hostile host -> empty root', { host: 'evil.com/"><script>' }, '/g', undefined, ''],
    ['no host at all -> empty root', {}, '/g', undefined, ''],
    ['IPv6 host', { host: '[::1]:8080' }, '/g', undefined, 'http://[::1]:8080/g'],
  ])('%s', (_name, headers, mountPath, publicUrl, expected) => {
    const root = computeRoot({ headers, mountPath, publicUrl });
    expect(root).toBe(expected);
    expect(root.endsWith('/')).toBe(false);
  });
});
