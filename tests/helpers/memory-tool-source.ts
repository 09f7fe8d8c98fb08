/**
 * A third kind of ToolSource, for tests only: tools that are plain functions in memory. It is
 * built from the seam's shared pieces alone (the policy in the run context, askApproval, error
 * messages), so the runtime, the graph and the routes run it with no change anywhere else.
 */
import { askApproval, errorMessage, policyDenial, unknownTool } from '../../server/agent/tools/define.ts';
import type { ToolSource, ToolSourceDescription } from '../../server/agent/tool-source.ts';
import { stampOf, type ToolAction } from '../../server/policy/index.ts';

export interface MemoryTool {
  name: string;
  description: string;
  /** JSON schema of the arguments. */
  schema: Record<string, unknown>;
  defaultAction: ToolAction;
  run(args: Record<string, unknown>): string;
}

export const MEMORY_KIND = 'memory';

export function memoryToolSource(tools: MemoryTool[]): ToolSource & { calls: Array<{ tool: string; args: Record<string, unknown>; user: string | null }> } {
  const calls: Array<{ tool: string; args: Record<string, unknown>; user: string | null }> = [];
  const description: ToolSourceDescription = {
    kind: MEMORY_KIND,
    tools: tools.map((t) => ({ name: t.name, description: t.description, schema: t.schema, defaultAction: t.defaultAction, selection: 'ranked' })),
    prefixes: [],
    version: 0,
  };
  return {
    calls,
    list: () => tools.map((t) => ({ name: t.name, description: t.description, selection: 'ranked' as const })),
    async call(user, name, args, ctx) {
      const found = tools.find((t) => t.name === name);
      if (!found) return unknownTool(name, ctx);
      const decision = ctx.run.policy(name, found.defaultAction);
      if (decision.action === 'deny') {
        const refusal = policyDenial(name, decision);
        return errorMessage(name, ctx.toolCallId, refusal.code, refusal.message);
      }
      if (decision.action === 'require_approval') {
        const refusal = askApproval({ kind: 'approval', tool: name, args, toolCallId: ctx.toolCallId, policy: stampOf(decision) });
        if (refusal) return errorMessage(name, ctx.toolCallId, refusal.code, refusal.message);
      }
      calls.push({ tool: name, args, user: user.id });
      return found.run(args);
    },
    describe: () => description,
    status: () => ({ kind: MEMORY_KIND, tools: tools.map((t) => t.name) }),
  };
}

/** One tool that writes a note (needs approval by default), as the contract suite's sample. */
export const NOTES_WRITE: MemoryTool = {
  name: 'notes_write',
  description: 'Write a note with the given text.',
  schema: { type: 'object', properties: { text: { type: 'string', description: 'The note' } }, required: ['text'] },
  defaultAction: 'require_approval',
  run: (args) => JSON.stringify({ written: args.text }),
};
