import { describe, expect, it } from 'vitest';
import { loadToolsFile, parseToolsFile } from '../../../../../server/agent/mcp/tools-file.ts';

describe('parseToolsFile', () => {
  it('reads stdio and HTTP servers from YAML, with defaults', () => {
    const file = parseToolsFile(
      ['servers:', '  - name: fs', '    command: node', '    args: [srv.js, /tmp]', '    env: { A: "1" }', '  - name: web', '    url: https://mcp.example/mcp'].join('\n'),
    );
    expect(file.error).toBeUndefined();
    expect(file.entries).toEqual([
      { ok: true, server: { transport: 'stdio', name: 'fs', command: 'node', args: ['srv.js', '/tmp'], env: { A: '1' } } },
      {
        ok: true,
        server: { transport: 'http', name: 'web', url: 'https://mcp.example/mcp', headers: {}, identity: { service_header: 'Authorization', user_header: 'X-User-JWT' } },
      },
    ]);
  });

  it('reads JSON, and custom identity header names (null sends none)', () => {
    const file = parseToolsFile(JSON.stringify({ servers: [{ name: 'w', url: 'http://h/mcp', identity: { service_header: 'X-Svc', user_header: null } }] }));
    expect(file.entries[0]).toMatchObject({ ok: true, server: { identity: { service_header: 'X-Svc', user_header: null } } });
  });

  const bad: Array<[row: string, text: string, error: RegExp]> = [
    ['not YAML', 'servers: [unclosed', /not valid YAML or JSON/],
    ['no servers list', 'tools: []', /top-level "servers" list/],
    ['servers not a list', 'servers: 3', /top-level "servers" list/],
  ];
  it.each(bad)('a bad file is an error, never a throw: %s', (_row, text, error) => {
    const file = parseToolsFile(text);
    expect(file.entries).toEqual([]);
    expect(file.error).toMatch(error);
  });

  const badEntries: Array<[row: string, entry: unknown, error: RegExp]> = [
    ['neither command nor url', { name: 'x' }, /command \(stdio\) or url/],
    ['not an object', 'x', /must be an object/],
    ['unknown key', { name: 'x', command: 'c', bogus: 1 }, /bogus/],
    ['url not http(s)', { name: 'x', url: 'file:///etc/passwd' }, /url/],
    ['no name', { command: 'c' }, /name/],
    ['args not strings', { name: 'x', command: 'c', args: [1] }, /args/],
  ];
  it.each(badEntries)('a bad entry marks only that server: %s', (_row, entry, error) => {
    const file = parseToolsFile(JSON.stringify({ servers: [entry, { name: 'good', command: 'node' }] }));
    expect(file.entries[0].ok).toBe(false);
    expect(file.entries[0].ok === false && file.entries[0].error).toMatch(error);
    expect(file.entries[1].ok).toBe(true);
  });

  it('a missing file is an error entry', async () => {
    expect((await loadToolsFile('/nonexistent/tools.yaml')).error).toMatch(/cannot read the tools file .*ENOENT/);
  });
});
