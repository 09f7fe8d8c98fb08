import { describe, expect, it } from 'vitest';
import { loadToolsFile, parseToolsFile, RETIRED_IDENTITY_REASON } from '../../../../../server/agent/mcp/tools-file.ts';

describe('parseToolsFile', () => {
  it('reads stdio and HTTP servers from YAML, with defaults', () => {
    const file = parseToolsFile(
      ['servers:', '  - name: fs', '    command: node', '    args: [srv.js, /tmp]', '    env: { A: "1" }', '  - name: web', '    url: https://mcp.example/mcp'].join('\n'),
    );
    expect(file.error).toBeUndefined();
    expect(file.entries).toEqual([
      { ok: true, server: { transport: 'stdio', name: 'fs', command: 'node', args: ['srv.js', '/tmp'], env: { A: '1' } } },
      // No identity: an HTTP server gets no credential unless its entry opts in (issue 30).
      { ok: true, server: { transport: 'http', name: 'web', url: 'https://mcp.example/mcp', headers: {} } },
    ]);
  });

  it('reads JSON, and identity "token" (the only opt-in)', () => {
    const file = parseToolsFile(JSON.stringify({ servers: [{ name: 'w', url: 'http://h/mcp', identity: 'token' }] }));
    expect(file.entries[0]).toEqual({ ok: true, server: { transport: 'http', name: 'w', url: 'http://h/mcp', headers: {}, identity: 'token' } });
  });

  const retired: Array<[row: string, entry: Record<string, unknown>]> = [
    ['both under identity (the old defaults)', { url: 'http://h/mcp', identity: { service_header: 'Authorization', user_header: 'X-User-JWT' } }],
    ['service_header alone', { url: 'http://h/mcp', identity: { service_header: 'X-Svc' } }],
    ['user_header: null (the old way to send none)', { url: 'http://h/mcp', identity: { user_header: null } }],
    ['at the top of the entry', { url: 'http://h/mcp', user_header: 'X-User-JWT' }],
    ['on a stdio entry', { command: 'node', identity: { service_header: 'Authorization' } }],
  ];
  it.each(retired)('the retired service_header/user_header mark that server down with the rule: %s', (_row, entry) => {
    const file = parseToolsFile(JSON.stringify({ servers: [{ name: 'old', ...entry }, { name: 'good', url: 'http://h/mcp' }] }));
    expect(file.error).toBeUndefined();
    expect(file.entries[0]).toEqual({ ok: false, name: 'old', error: RETIRED_IDENTITY_REASON, transport: 'url' in entry ? 'http' : 'stdio' });
    expect(RETIRED_IDENTITY_REASON).toMatch(/^service_header\/user_header are no longer supported: tool servers get no Airlock credentials .*identity: "token"/);
    expect(RETIRED_IDENTITY_REASON).not.toContain('\n');
    expect(file.entries[1].ok).toBe(true);
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
    ['identity other than "token"', { name: 'x', url: 'http://h/mcp', identity: 'user-jwt' }, /identity/],
    ['identity on a stdio server', { name: 'x', command: 'c', identity: 'token' }, /identity/],
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

  it('openapi entries (issue 41): their own strict schema, split from the MCP servers; names unique across kinds', () => {
    const file = parseToolsFile([
      'servers:',
      '  - name: billing',
      '    openapi: ./billing.yaml',
      '    base_url: https://billing.internal',
      '    identity: dual_jwt',
      '    audience: billing',
      '    operations: { exclude: [deleteEverything] }',
      '  - name: vault',
      '    openapi: https://vault.example/openapi.json',
      '    identity: { bearer_env: VAULT_TOKEN }',
      '  - name: billing',
      '    url: https://mcp.example/mcp',
      '  - name: odd',
      '    openapi: ./x.yaml',
      '    identity: token',
      '    headers: { A: b }',
    ].join('\n'));
    expect(file.openapi).toEqual([
      { ok: true, server: { transport: 'openapi', name: 'billing', openapi: './billing.yaml', base_url: 'https://billing.internal', identity: 'dual_jwt', audience: 'billing', operations: { exclude: ['deleteEverything'] } } },
      { ok: true, server: { transport: 'openapi', name: 'vault', openapi: 'https://vault.example/openapi.json', identity: { bearer_env: 'VAULT_TOKEN' } } },
      { ok: false, name: 'odd', error: expect.stringMatching(/identity.*headers|headers|identity/) },
    ]);
    // The MCP server reusing an OpenAPI entry's name is down, as an entry of its own kind.
    expect(file.entries).toEqual([{ ok: false, name: 'billing', error: 'the server name "billing" is already used by an earlier server' }]);
  });
});
