/**
 * A large real-world document (issue 41): GitHub's REST API as @octokit/openapi ships it (OpenAPI
 * 3.0.3, 13 MB, 1223 operations), loaded by the openapi source as the gateway would (in the
 * background, $refs resolved by swagger-parser). Every operation is a tool or down with a reason,
 * none lost; names follow the rule. The time it took is printed, never asserted.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OpenApiToolSource } from '../../server/agent/openapi/source.ts';

const spec = join(dirname(createRequire(import.meta.url).resolve('@octokit/openapi/package.json')), 'generated', 'api.github.com.json');

describe('a large public OpenAPI document', () => {
  it("GitHub's REST API: every operation a tool or down with a reason", async () => {
    const started = performance.now();
    const source = new OpenApiToolSource({
      entries: [{ ok: true, server: { name: 'github', openapi: spec, identity: 'none', transport: 'openapi' } }],
      dir: '.', timeoutMs: 30_000, resultMaxChars: 10_000, reservedNames: [],
    });
    source.start();
    await source.settled();
    const [status] = source.status().servers;
    console.log(`@octokit/openapi api.github.com.json: ${status.tools} tools, ${status.down_operations.length} operations down, loaded in ${Math.round(performance.now() - started)} ms`);
    expect(status).toMatchObject({ status: 'up', last_error: null });
    expect(status.tools + status.down_operations.length).toBe(1223);
    expect(status.tools).toBeGreaterThan(1100);
    for (const d of status.down_operations) expect(d.reason).toMatch(/\$ref cycle|nests deeper|collides/);
    const names = source.describe().tools.map((t) => t.name);
    expect(names).toContain('github_repos_get');
    expect(names.every((n) => /^github_[a-z0-9_]+$/.test(n) && n.length <= 64)).toBe(true);
    expect(source.describe().tools.find((t) => t.name === 'github_repos_get')?.defaultAction).toBe('allow');
    expect(source.describe().tools.find((t) => t.name === 'github_repos_delete')?.defaultAction).toBe('require_approval');
  }, 120_000);
});
