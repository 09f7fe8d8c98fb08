/**
 * The policy, grant and approval gate of a tool source's call, shared by the MCP tools (mcp/tool.ts)
 * and the OpenAPI operations (openapi/tool.ts): the action is the run's tool policy (server/policy)
 * with the tool's own default ranked below it; `deny` refuses here; a live grant lets a
 * `require_approval` call run without a card (tools/grant.ts); otherwise the call pauses in
 * interrupt() with the card the source words, and on resume runs the approved (possibly edited,
 * re-checked) arguments. Nothing before interrupt() has side effects: the call re-runs from the top.
 * The source supplies only what differs: the card's words, its preview, the execution and its audit.
 * @module
 */
import { approvalTermsOf, grantTerms, stampOf, type PolicyDecision, type ToolAction } from '../policy/index.ts';
import type { ArgumentLabels, EffectPreview } from '../operations/index.ts';
import { editedResult } from './edited-call.ts';
import type { ToolCallContext, ToolResult, ToolUser } from './tool-source.ts';
import { askDecision, editedRun, errorMessage, policyDenial } from './tools/define.ts';
import { grantedCall } from './tools/grant.ts';
import type { ApprovalDecision, ApprovalRequest } from './types.ts';

type Args = Record<string, unknown>;

/** The decision that let a paused call run (its approval id and bound action hash when known). */
export type ApprovedDecision = Extract<ApprovalDecision, { approved: true }>;

/** How a call that did not run ended, for the source's audit row. */
export type GateRefusal = 'refused' | 'not_approved';

export interface GatedTool {
  name: string;
  /** The tool's own default action, which the policy file ranks above. */
  builtin: ToolAction;
  /** Its input schema (an approver's edit is checked against it). */
  schema: object;
  labels: ArgumentLabels;
  /** The argument names a grant matches on by default (none: all of the call's arguments). */
  grantScope?: readonly string[];
  /** The card's question. */
  prompt(args: Args): string;
  /** What the call would do, read before the pause only; null: none. */
  preview?(args: Args, user: ToolUser, call: ToolCallContext): Promise<EffectPreview | null>;
  /** Runs the call with `args`: the model's, or an approver's edit. `approved`: the approval, if one paused it. */
  execute(args: Args, decision: PolicyDecision, approved: ApprovedDecision | null): Promise<ToolResult>;
  /** A call the policy or the approver refused (audited by the source). */
  refused?(args: Args, decision: PolicyDecision, how: GateRefusal, code: string): Promise<void>;
}

/** Runs one call of `tool` through the gate. Never throws but for a graph interrupt or an abort. */
export async function gatedCall(tool: GatedTool, user: ToolUser, args: Args, call: ToolCallContext): Promise<ToolResult> {
  const { toolCallId, run: ctx } = call;
  const { name } = tool;
  let decision: PolicyDecision;
  try {
    decision = ctx.policy(name, tool.builtin, args);
  } catch (error) {
    return errorMessage(name, toolCallId, 'INTERNAL', (error as Error).message);
  }
  if (decision.action === 'deny') {
    await tool.refused?.(args, decision, 'refused', 'FORBIDDEN');
    const refusal = policyDenial(name, decision);
    return errorMessage(name, toolCallId, refusal.code, refusal.message);
  }
  // A live grant lets the call run without a card, as for the built-in tools (tools/grant.ts).
  let granted = false;
  try {
    granted = (await grantedCall(ctx, { tool: name, args, toolCallId, decision })) !== null;
  } catch (error) {
    return errorMessage(name, toolCallId, 'INTERNAL', (error as Error).message);
  }
  if (decision.action !== 'require_approval' || granted) return tool.execute(args, decision, null);
  // Outside any try: interrupt() works by throwing. On resume it returns the decision.
  const terms = approvalTermsOf(decision.rule);
  // Before the pause only (a resume re-runs the tool from the top).
  const preview = ctx.resumedCalls?.has(toolCallId) || !tool.preview ? null : await tool.preview(args, user, call);
  const request: ApprovalRequest = {
    kind: 'approval', tool: name, args, toolCallId, prompt: tool.prompt(args), policy: stampOf(decision), preview, labels: tool.labels,
    ...grantTerms(decision, args, tool.grantScope), ...(terms ? { terms } : {}),
  };
  const answer = askDecision(request);
  if ('refusal' in answer) {
    await tool.refused?.(args, decision, 'not_approved', answer.refusal.code);
    return errorMessage(name, toolCallId, answer.refusal.code, answer.refusal.message);
  }
  // Edited before approval (issue 27 item 1): these arguments run, and the model is told.
  if (answer.approved.args) {
    const edited = editedRun(name, tool.schema, answer.approved.args, ctx);
    if ('refusal' in edited) return errorMessage(name, toolCallId, edited.refusal.code, edited.refusal.message);
    return editedResult(name, toolCallId, edited.args, await tool.execute(edited.args, decision, answer.approved));
  }
  return tool.execute(args, decision, answer.approved);
}
