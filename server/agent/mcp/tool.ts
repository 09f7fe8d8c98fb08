/**
 * One MCP tool as its source runs it, under the same approvals as the built-in tools (the shared
 * gate, gated-call.ts): the run's tool policy with the annotations (policy.ts) as the tool's
 * built-in default; `require_approval` pauses with a card that names the server and shows the arguments; every call ends in one audit row; failures (the server down
 * or dying mid-call, an error result) become error ToolMessages (TOOL_FAILURE), so the run carries on.
 * Nothing before interrupt() has side effects: the tool re-runs from the top on resume.
 * @module
 */
import { ToolMessage } from '@langchain/core/messages';
import { isGraphInterrupt } from '@langchain/langgraph';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { createHash } from 'node:crypto';
import { argumentLabels, type EffectPreview } from '../../operations/index.ts';
import type { ToolAction } from '../../policy/index.ts';
import { gatedCall } from '../gated-call.ts';
import { errorMessage } from '../tools/define.ts';
import { storedBeforeEffect } from '../tools/context.ts';
import type { ToolCallContext, ToolResult, ToolUser } from '../tool-source.ts';
import { callAuditor, type McpAuditSink } from './audit.ts';
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
  /** The server's `<tool>_preview` tool (issue 27): asked before the approval pause, never offered to the model. */
  previewTool?: string;
}

/** The question the approval card asks: the server by name and every argument. */
export function mcpApprovalPrompt(server: string, tool: string, args: Args): string {
  const shown = Object.entries(args).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `Run ${tool} on the MCP server "${server}"${shown.length ? ` with ${shown.join(', ')}` : ''}?`;
}

/** The tool's input schema (an empty object schema when it declares none). */
const schemaOf = (mcpTool: Tool): Record<string, unknown> => (mcpTool.inputSchema ?? { type: 'object', properties: {} }) as Record<string, unknown>;

/** The tool's built-in default action (its annotations), which the policy file ranks above. */
export function actionOf(mcpTool: Tool): ToolAction {
  return annotationAction(mcpTool.annotations);
}

/** One MCP tool as the source serves it: what the model reads, and how one call runs. */
export interface McpTool {
  name: string;
  description: string;
  /** The tool's JSON schema. */
  schema: Record<string, unknown>;
  defaultAction: ToolAction;
  run(user: ToolUser, args: Args, call: ToolCallContext): Promise<ToolResult>;
}

/** Builds the tool `name` for `mcpTool` of the connection's server. */
export function defineMcpTool(name: string, mcpTool: Tool, deps: McpToolDeps): McpTool {
  const server = deps.connection.config.name;
  const builtin = actionOf(mcpTool);
  const description = [mcpTool.description ?? mcpTool.title ?? mcpTool.name, `(MCP server "${server}")`].join(' ');
  const labels = argumentLabels(mcpTool.inputSchema);
  return {
    name,
    description,
    schema: schemaOf(mcpTool),
    defaultAction: builtin,
    run(user: ToolUser, args: Args, call: ToolCallContext): Promise<ToolResult> {
      const { toolCallId, run: ctx } = call;
      const finish = callAuditor(deps.audit, call, { server, tool: mcpTool.name, name }, deps.warn);
      return gatedCall({
        name, builtin, schema: schemaOf(mcpTool), labels,
        prompt: (a) => mcpApprovalPrompt(server, mcpTool.name, a),
        preview: (a, u, c) => mcpPreview(deps, a, u, c.signal),
        refused: (a, decision, how, code) => finish(a, decision, how, code, false),
        /** Runs the call with `runArgs` (the model's, or an approver's edit), audited as such. */
        async execute(runArgs, decision) {
          // An MCP tool may change anything.
          await storedBeforeEffect(ctx, toolCallId);
          try {
            // The user goes as an id, for a token minted for this server alone (identity.ts); never
            // the user's JWT nor the service token, which work against Airlock (issue 30).
            const rendered = renderMcpResult(await deps.connection.call(mcpTool.name, runArgs, { userId: user.id, signal: call.signal, traceparent: call.span?.traceparent() }), deps.resultMaxChars);
            if (rendered.isError) {
              await finish(runArgs, decision, 'failed', 'TOOL_FAILURE', true);
              return errorMessage(name, toolCallId, 'TOOL_FAILURE', rendered.modelText);
            }
            await finish(runArgs, decision, 'success', null, true);
            // The model reads the (possibly cut) text; the card shows the whole result (events.ts).
            return new ToolMessage({ tool_call_id: toolCallId, name, content: rendered.modelText, artifact: { output: rendered.output, truncated: rendered.truncated } });
          } catch (error) {
            if (isGraphInterrupt(error) || call.signal?.aborted) throw error;
            await finish(runArgs, decision, 'failed', 'TOOL_FAILURE', true);
            const reason = error instanceof Error ? error.message : String(error);
            return errorMessage(name, toolCallId, 'TOOL_FAILURE', `The MCP server "${server}" failed: ${reason}`);
          }
        },
      }, user, args, call);
    },
  };
}

/** How much of a `<tool>_preview` answer the card shows. */
const PREVIEW_MAX_CHARS = 500;

/**
 * The server's informational preview (issue 27 item 3): the text its `<tool>_preview` tool answers
 * for the same arguments, as the user. Unchecked: nothing holds the server to it at execution, so
 * its `state_hash` only names the text shown. Null when the server has none or it failed.
 */
async function mcpPreview(deps: McpToolDeps, args: Args, user: ToolUser, signal?: AbortSignal): Promise<EffectPreview | null> {
  if (!deps.previewTool) return null;
  try {
    const rendered = renderMcpResult(await deps.connection.call(deps.previewTool, args, { userId: user.id, signal }), PREVIEW_MAX_CHARS);
    if (rendered.isError || !rendered.modelText.trim()) return null;
    const summary = rendered.modelText.trim();
    return { summary, details: { source: deps.previewTool, checked: false }, state_hash: createHash('sha256').update(summary).digest('hex') };
  } catch (error) {
    if (signal?.aborted) throw error;
    return null;
  }
}
