/**
 * The ToolSource contract (server/agent/tool-source.ts): one suite every source runs, as
 * tests/helpers/bus-contract.ts does for the session bus. The memory source runs it in the unit
 * project; the built-in tools (against a fake api over HTTP) and an MCP server (the real SDK over
 * streamable HTTP) in the integration project. A factory gives the source, a sample call that
 * succeeds under `allow`, and the run context the call needs (its policy is set per case).
 */
import { ToolMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallContext, ToolResult, ToolSource, ToolUser } from '../../server/agent/tool-source.ts';
import type { ToolContext } from '../../server/agent/tools/context.ts';
import { decideToolPolicy, type ToolAction } from '../../server/policy/index.ts';

export interface ToolSourceFixture {
  source: ToolSource;
  sample: { tool: string; args: Record<string, unknown> };
  /** The run context of a call, without its policy. */
  run: Omit<ToolContext, 'policy'>;
  close(): Promise<void>;
}

const ACTIONS: ToolAction[] = ['allow', 'caution', 'require_approval', 'deny'];
let counter = 0;

/** The error code of a result, or null when it succeeded. */
export function errorCode(result: ToolResult): string | null {
  if (typeof result === 'string') return null;
  expect(result).toBeInstanceOf(ToolMessage);
  return result.status === 'error' ? ((result.artifact as { code?: string } | undefined)?.code ?? 'unknown') : null;
}

export function runToolSourceContract(name: string, factory: () => Promise<ToolSourceFixture>): void {
  describe(`ToolSource contract: ${name}`, () => {
    let f: ToolSourceFixture;
    const user = (): ToolUser => f.run.user;
    const ctx = (action: ToolAction): ToolCallContext => ({
      toolCallId: `call_${name}_${++counter}`,
      run: { ...f.run, policy: (tool) => decideToolPolicy(null, { tenant: f.run.user.tenant, username: f.run.user.username }, tool, action) },
    });
    beforeAll(async () => {
      f = await factory();
    });
    afterAll(() => f.close());

    it('1. describes each tool once: a name, a description, a schema, a default action and how it is offered', () => {
      const d = f.source.describe();
      expect(d.kind).toMatch(/^[a-z]+$/);
      const names = d.tools.map((t) => t.name);
      expect(new Set(names).size).toBe(names.length);
      expect(names).toContain(f.sample.tool);
      for (const t of d.tools) {
        expect(t.description.length, t.name).toBeGreaterThan(0);
        expect(typeof t.schema).toBe('object');
        expect(ACTIONS).toContain(t.defaultAction);
        expect(['rules', 'ranked']).toContain(t.selection);
      }
      for (const p of d.prefixes) expect(typeof p).toBe('string');
    });

    it('2. the same description while nothing changed (the runtime keeps its graph)', () => {
      expect(f.source.describe().version).toBe(f.source.describe().version);
      expect(f.source.describe().tools.map((t) => t.name)).toEqual(f.source.describe().tools.map((t) => t.name));
    });

    it('3. lists for a user only tools it describes; its status names its kind and every tool', () => {
      const described = f.source.describe();
      const names = new Set(described.tools.map((t) => t.name));
      for (const t of f.source.list(user())) {
        expect(names.has(t.name), t.name).toBe(true);
        expect(t.selection).toBe(described.tools.find((d) => d.name === t.name)?.selection);
      }
      const status = f.source.status();
      expect(status.kind).toBe(described.kind);
      expect([...status.tools].sort()).toEqual([...names].sort());
    });

    it('4. runs a call the policy allows', async () => {
      const result = await f.source.call(user(), f.sample.tool, f.sample.args, ctx('allow'));
      expect(errorCode(result)).toBeNull();
    });

    it('5. refuses a call the policy denies (FORBIDDEN), without throwing', async () => {
      const result = await f.source.call(user(), f.sample.tool, f.sample.args, ctx('deny'));
      expect(errorCode(result)).toBe('FORBIDDEN');
    });

    it('6. answers a tool it does not have with NOT_FOUND', async () => {
      const result = await f.source.call(user(), 'no_such_tool_anywhere', {}, ctx('allow'));
      expect(errorCode(result)).toBe('NOT_FOUND');
    });
  });
}
