/**
 * A run's tool allowlist, its `tool_policy` on the wire (seed 000, issue 11): `none` offers no tool and refuses every call;
 * `allowlist` offers and executes only the named tools. Applied twice, because it is a runtime
 * boundary and not a prompt convention: when the model's tool schemas are built (middleware.ts
 * filters the offer) and when a call executes (a refused call answers FORBIDDEN, and shows in the
 * run's events like any tool error). Pure.
 * @module
 */
import type { ToolPolicy } from '../db/agent-runs.ts';

export type { ToolPolicy };

/** May a run with `policy` see and run `tool`? No policy: every tool (today's behaviour). */
export function runAllowsTool(policy: ToolPolicy | null | undefined, tool: string): boolean {
  if (!policy) return true;
  if (policy.mode === 'none') return false;
  return policy.allowedTools.includes(tool);
}

/** The refusal a call outside the policy gets (the model reads it; events carry the code). */
export function runToolRefusal(policy: ToolPolicy, tool: string): { code: 'FORBIDDEN'; message: string } {
  const why = policy.mode === 'none' ? 'this run allows no tools' : `${tool} is not in this run's allowed_tools`;
  return { code: 'FORBIDDEN', message: `Not done: ${tool} was refused by the run's tool_policy (${why}).` };
}
