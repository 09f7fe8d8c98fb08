/**
 * One MCP tool as a LangChain tool, under the same approvals as the built-in tools (define.ts):
 * the action is the run's tool policy (server/policy) with the annotations (policy.ts) as the
 * tool's built-in default; `require_approval` pauses in interrupt() with a card that names
 * the server and shows the arguments; every call ends in one audit row; failures (the server down
 * or dying mid-call, an error result) become error ToolMessages (TOOL_FAILURE), so the run carries on.
 * Nothing before interrupt() has side effects: the tool re-runs from the top on resume.
 * @module
 */
import { ToolMessage } from '@langchain/core/messages';
import { tool, type ToolRuntime } from '@langchain/core/tools';
import { isGraphInterrupt } from '@langchain/langgraph';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { stampOf, type PolicyDecision, type ToolAction } from '../../policy/index.ts';
import { askApproval, errorMessage, policyDenial } from '../tools/define.ts';
import { storedBeforeEffect, toolContext, type ToolContext } from '../tools/context.ts';
import { claimString, tokenClaims } from '../token-claims.ts';
import type { ApprovalRequest } from '../types.ts';
import { mcpAuditEntry, type McpAuditSink, type McpCallOutcome } from './audit.ts';
import type { McpConnection } from './connection.ts';
import { annotationAction } from './policy.ts';
import { renderMcpResult } from './result.ts';

type Args = Record<string, unknown>;

export interface McpToolDeps {
  connection: McpConnection;
  audit?: McpAuditSink;
  resultMaxChars: number;
  /** Log sink for audit failures (the audit row must never break the call). */
  warn?: (message: string, error: unknown) => void;
}

/** The question the approval card asks: the server by name and every argument. */
export function mcpApprovalPrompt(server: string, tool: string, args: Args): string {
  const shown = Object.entries(args).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `Run ${tool} on the MCP server "${server}"${shown.length ? ` with ${shown.join(', ')}` : ''}?`;
}

/** The tool's built-in default action (its annotations), which the policy file ranks above. */
export function actionOf(mcpTool: Tool): ToolAction {
  return annotationAction(mcpTool.annotations);
}

/** Builds the LangChain tool `name` for `mcpTool` of the connection's server. */
export function defineMcpTool(name: string, mcpTool: Tool, deps: McpToolDeps) {
  const server = deps.connection.config.name;
  const builtin = actionOf(mcpTool);
  const description = [mcpTool.description ?? mcpTool.title ?? mcpTool.name, `(MCP server "${server}")`].join(' ');
  return tool(
    async (args: Args, runtime: ToolRuntime) => {
      const toolCallId = runtime.toolCallId ?? runtime.toolCall?.id ?? 'unknown';
      const started = performance.now();
      let ctx: ToolContext | undefined;
      let decision: PolicyDecision | undefined;
      const finish = async (result: McpCallOutcome, errorCode: string | null, timed: boolean) => {
        if (!deps.audit || !ctx || !decision) return;
        const serviceToken = await ctx.serviceToken.get().catch(() => undefined);
        const entry = mcpAuditEntry({
          server, tool: mcpTool.name, name, args, result, decision, errorCode, userToken: ctx.userToken, serviceToken,
          toolCallId, conversationId: ctx.conversationId, durationMs: timed ? performance.now() - started : null,
        });
        await deps.audit(entry).catch((error) => deps.warn?.('writing the MCP audit row failed', error));
      };
      try {
        ctx = toolContext(runtime);
        decision = ctx.policy(name, builtin);
      } catch (error) {
        return errorMessage(name, toolCallId, 'INTERNAL', (error as Error).message);
      }
      if (decision.action === 'deny') {
        await finish('refused', 'FORBIDDEN', false);
        const refusal = policyDenial(name, decision);
        return errorMessage(name, toolCallId, refusal.code, refusal.message);
      }
      if (decision.action === 'require_approval') {
        // Outside any try: interrupt() works by throwing. On resume it returns the decision.
        const request: ApprovalRequest = { kind: 'approval', tool: name, args, toolCallId, prompt: mcpApprovalPrompt(server, mcpTool.name, args), policy: stampOf(decision) };
        const refusal = askApproval(request);
        if (refusal) {
          await finish('not_approved', refusal.code, false);
          return errorMessage(name, toolCallId, refusal.code, refusal.message);
        }
      }
      // The user goes as an id, for a token minted for this server alone (identity.ts); never
      // the user's JWT nor the service token, which work against Airlock (issue 30).
      const userId = claimString(tokenClaims(ctx.userToken).sub);
      // An MCP tool may change anything.
      await storedBeforeEffect(ctx, toolCallId);
      try {
        const rendered = renderMcpResult(await deps.connection.call(mcpTool.name, args, { userId, signal: runtime.signal }), deps.resultMaxChars);
        if (rendered.isError) {
          await finish('failed', 'TOOL_FAILURE', true);
          return errorMessage(name, toolCallId, 'TOOL_FAILURE', rendered.modelText);
        }
        await finish('success', null, true);
        // The model reads the (possibly cut) text; the card shows the whole result (events.ts).
        return new ToolMessage({ tool_call_id: toolCallId, name, content: rendered.modelText, artifact: { output: rendered.output, truncated: rendered.truncated } });
      } catch (error) {
        if (isGraphInterrupt(error) || runtime.signal?.aborted) throw error;
        await finish('failed', 'TOOL_FAILURE', true);
        const reason = error instanceof Error ? error.message : String(error);
        return errorMessage(name, toolCallId, 'TOOL_FAILURE', `The MCP server "${server}" failed: ${reason}`);
      }
    },
    { name, description, schema: (mcpTool.inputSchema ?? { type: 'object', properties: {} }) as Record<string, unknown> },
  );
}
