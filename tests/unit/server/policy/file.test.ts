import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadToolPolicy, parsePolicyText, PolicyFileError } from '../../../../server/policy/index.ts';

const seedJson = JSON.stringify(
  {
    policy: {
      default_action: 'caution',
      tool_rules: { exec: 'require_approval', write_file: 'deny' },
      tenant_rules: { pska: { tools: { pska_search: 'allow', exec: 'deny' } } },
      user_rules: { 'pska:operator': { tools: { exec: 'require_approval' } } },
    },
  },
  null,
  2,
);

describe('parsePolicyText: good files', () => {
  it("reads the seed's JSON (with the policy key)", () => {
    const rules = parsePolicyText(seedJson, 'p.json');
    expect(rules.default_action).toBe('caution');
    expect(rules.tenant_rules.pska.tools.exec).toBe('deny');
    expect(rules.user_rules['pska:operator'].tools.exec).toBe('require_approval');
  });
  it('reads YAML without the policy key; missing sections are empty', () => {
    const rules = parsePolicyText('tool_rules:\n  deploy_service: deny\n', 'p.yaml');
    expect(rules).toEqual({ tool_rules: { deploy_service: 'deny' }, tenant_rules: {}, user_rules: {}, service_rules: {} });
  });
});

// [name, text, line, what the message says]
const bad: Array<[string, string, number, RegExp]> = [
  ['unknown action', 'policy:\n  default_action: caution\n  tool_rules:\n    exec: maybe\n', 4, /tool_rules\.exec: expected one of allow, caution, require_approval, deny/],
  ['unknown top-level key', 'default_action: allow\ntool_rule:\n  exec: deny\n', 2, /unknown key "tool_rule"/],
  ['unknown key next to policy', 'policy:\n  default_action: allow\nextra: 1\n', 3, /unknown key "extra" next to "policy"/],
  ['tenant entry without tools', 'tenant_rules:\n  pska:\n    tool:\n      exec: deny\n', 2, /tenant_rules\.pska\.tools: missing/],
  ['unknown key in a service rule (issue 24)', 'service_rules:\n  pska-client:\n    user_key_only: true\n    any_user: true\n', 4, /unknown key "any_user" in service_rules\.pska-client/],
  ['service rule user_key_only not a boolean', 'service_rules:\n  pska-client:\n    user_key_only: "yes"\n', 3, /service_rules\.pska-client\.user_key_only/],
  ['user key without tenant', 'user_rules:\n  operator:\n    tools:\n      exec: allow\n', 2, /user_rules\.operator: a user key is tenant:username/],
  ['bad default_action in JSON', '{\n  "policy": {\n    "default_action": "ask"\n  }\n}\n', 3, /default_action: expected one of/],
  ['YAML syntax', 'tool_rules:\n  exec: [deny\n', 3, /not valid YAML or JSON/],
  ['duplicate key', 'tool_rules:\n  exec: deny\n  exec: allow\n', 3, /not valid YAML or JSON/],
  ['empty file', '\n', 1, /the file is empty/],
  ['a list, not a map', '- exec\n', 1, /expected object/],
];

describe('parsePolicyText: bad files name the line', () => {
  it.each(bad)('%s', (_name, text, line, what) => {
    let error: unknown;
    try {
      parsePolicyText(text, '/etc/airlock/policy.yaml');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PolicyFileError);
    const message = (error as Error).message;
    expect(message).toContain(`the policy file /etc/airlock/policy.yaml line ${line}:`);
    expect(message).toMatch(what);
    expect(message).not.toContain('\n');
  });
});

describe('loadToolPolicy', () => {
  it('unset: the built-in defaults alone', async () => {
    const policy = await loadToolPolicy(undefined);
    expect(policy.rules).toBeNull();
    expect(policy.decide({ tenant: 'demo', username: 'a' }, 'deploy_service').action).toBe('require_approval');
  });
  it('a missing file is a PolicyFileError naming it', async () => {
    await expect(loadToolPolicy('/nonexistent/policy.yaml')).rejects.toThrow(/the policy file \/nonexistent\/policy\.yaml cannot be read \(ENOENT\)/);
  });
  it('reads a file from disk', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'policy-'));
    const file = join(dir, 'policy.json');
    await writeFile(file, seedJson);
    const policy = await loadToolPolicy(file);
    expect(policy.source).toBe(file);
    expect(policy.decide({ tenant: 'pska', username: 'x' }, 'exec').scope).toBe('tenant:pska');
  });
});

describe('parsePolicyText: service_rules (issue 24, seed 000 PSKA call)', () => {
  it('reads service_rules.<client_id>.user_key_only', () => {
    const rules = parsePolicyText('policy:\n  service_rules:\n    pska-client:\n      user_key_only: true\n', 'p.yaml');
    expect(rules.service_rules).toEqual({ 'pska-client': { user_key_only: true } });
  });
});
