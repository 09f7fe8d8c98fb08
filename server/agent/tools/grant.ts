/**
 * The one grant check of every tool source (issue 27 item 2): the built-in tools (define.ts) and
 * the MCP tools (mcp/tool.ts) both ask here, before their approval pause, whether a live grant lets
 * this call run without a card. RBAC is not bypassed: the caller checks the permission first, and
 * the backend (or the MCP server's own identity) checks the call itself again.
 * @module
 */
import { grantLimitS, ruleHash, ruleScoped, type PolicyDecision } from '../../policy/index.ts';
import type { GrantUse, ToolContext } from './context.ts';

/**
 * The grant this call runs under, its use counted and remembered for its tool_start/tool_end; null:
 * it asks (no grant applies: not an approval, a rule that is never grantable, a resumed call, which
 * was decided already, or no live grant made under this call's deciding rule (issue 36: the same
 * rule hash) whose match the arguments satisfy and is not empty, unless that rule has `when`).
 * The rule's hash is worked out only for a grant whose match fits: no extra work, and no query, on
 * a call no grant matches.
 */
export async function grantedCall(ctx: ToolContext, call: { tool: string; args: Readonly<Record<string, unknown>>; toolCallId: string; decision: PolicyDecision }): Promise<GrantUse | null> {
  if (call.decision.action !== 'require_approval' || !ctx.grantFor || ctx.resumedCalls?.has(call.toolCallId)) return null;
  if (grantLimitS(call.decision.rule) <= 0) return null;
  let hash: string | undefined;
  const rule = { hash: () => (hash ??= ruleHash(call.decision)), scoped: ruleScoped(call.decision.rule) };
  const use = await ctx.grantFor(call.tool, call.args, rule);
  if (use) ctx.granted?.set(call.toolCallId, use);
  return use;
}
