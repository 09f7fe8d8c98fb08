/**
 * One OpenAPI operation as its source runs it (issue 41), through the same gate as every other
 * tool (gated-call.ts): policy, grants, the approval card naming the API, the method and the path,
 * edits. The call carries what the entry's `identity` says: with `dual_jwt`, seed 003's two JWTs
 * minted for this call alone (server/auth/backend-token.ts), the user token naming the approval
 * that allowed it. A changing call sends `Idempotency-Key: <approval id or conversation id>:<call id>`,
 * so a resume after a crash that repeats the request is safe on a backend that honours it. Tokens
 * live only in the request's headers: never in the arguments, the result, the audit row or a log.
 * Every outcome is a ToolMessage (non-2xx: the status and a short excerpt); the run goes on.
 * @module
 */
import { ToolMessage } from '@langchain/core/messages';
import { isGraphInterrupt } from '@langchain/langgraph';
import { isAirlockError } from '../../errors.ts';
import { argumentLabels } from '../../operations/index.ts';
import type { PolicyDecision, ToolAction } from '../../policy/index.ts';
import { gatedCall, type ApprovedDecision } from '../gated-call.ts';
import { callAuditor, type McpAuditSink } from '../mcp/audit.ts';
import { cardMaxChars, cutForModel } from '../mcp/result.ts';
import { claimString, tokenClaims } from '../token-claims.ts';
import type { ToolCallContext, ToolResult, ToolUser } from '../tool-source.ts';
import { codeForStatus } from '../tools/backend.ts';
import { storedBeforeEffect } from '../tools/context.ts';
import { errorMessage } from '../tools/define.ts';
import type { OpenApiOperation } from './operations.ts';
import { buildRequest, sendRequest } from './request.ts';

type Args = Record<string, unknown>;

/** What a call's identity headers need to know. */
export interface IdentityCall {
  tool: string;
  user: { id: string; username: string; role: string | null; tenant: string };
  approval?: { id: string; actionHash?: string };
}

export interface OpenApiToolDeps {
  server: string;
  base: URL;
  timeoutMs: number;
  resultMaxChars: number;
  /** The headers that say who calls (none, a static bearer, or the two minted JWTs). */
  identity: (call: IdentityCall) => Promise<Record<string, string>>;
  audit?: McpAuditSink;
  /** A call that failed to reach the API (the source's `last_error`). */
  onError?: (message: string) => void;
  warn?: (message: string, error: unknown) => void;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const EXCERPT_CHARS = 300;

/** The card's question: the API, the method and path, and every argument. */
export function openApiPrompt(server: string, op: Pick<OpenApiOperation, 'method' | 'path'>, args: Args): string {
  const shown = Object.entries(args).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `Call ${op.method} ${op.path} on the API "${server}"${shown.length ? ` with ${shown.join(', ')}` : ''}?`;
}

export interface OpenApiTool {
  name: string;
  description: string;
  schema: Record<string, unknown>;
  defaultAction: ToolAction;
  run(user: ToolUser, args: Args, call: ToolCallContext): Promise<ToolResult>;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function defineOpenApiTool(op: OpenApiOperation, deps: OpenApiToolDeps): OpenApiTool {
  const { server, base } = deps;
  const { name } = op;
  const labels = argumentLabels(op.schema);
  const grantScope = op.params.filter((p) => p.in === 'path').map((p) => p.name);
  return {
    name, description: op.description, schema: op.schema, defaultAction: op.defaultAction,
    run(user: ToolUser, args: Args, call: ToolCallContext): Promise<ToolResult> {
      const { toolCallId, run: ctx } = call;
      const finish = callAuditor(deps.audit, call, { server, tool: op.operationId ?? name, name, method: 'HTTP', path: `${op.method} openapi://${server}${op.path}` }, deps.warn);
      const fail = async (runArgs: Args, decision: PolicyDecision, code: string, message: string) => {
        await finish(runArgs, decision, 'failed', code, true);
        return errorMessage(name, toolCallId, code, message);
      };
      const execute = async (runArgs: Args, decision: PolicyDecision, approved: ApprovedDecision | null): Promise<ToolResult> => {
        if (!SAFE.has(op.method)) await storedBeforeEffect(ctx, toolCallId);
        try {
          const request = buildRequest(op, base, runArgs);
          const claims = tokenClaims(ctx.userToken);
          const who = { id: user.id ?? '', username: user.username || (claimString(claims.username) ?? ''), role: claimString(claims.role), tenant: user.tenant };
          const approval = approved?.approval_id ? { id: approved.approval_id, actionHash: approved.action_hash } : undefined;
          const headers = { ...(await deps.identity({ tool: name, user: who, approval })) };
          if (!SAFE.has(op.method)) headers['idempotency-key'] = `${approval?.id ?? ctx.conversationId}:${toolCallId}`;
          const traceparent = call.span?.traceparent();
          if (traceparent) headers.traceparent = traceparent;
          const answer = await sendRequest(request, headers, { timeoutMs: deps.timeoutMs, maxChars: cardMaxChars(deps.resultMaxChars), signal: call.signal, server });
          if (answer.status < 200 || answer.status >= 300) {
            const excerpt = answer.text.replace(/\s+/g, ' ').trim().slice(0, EXCERPT_CHARS);
            return fail(runArgs, decision, codeForStatus(answer.status), `The API "${server}" answered HTTP ${answer.status} to ${op.method} ${op.path}${excerpt ? `: ${excerpt}` : '.'}`);
          }
          await finish(runArgs, decision, 'success', null, true);
          const model = cutForModel(answer.text || `(HTTP ${answer.status}, no content)`, deps.resultMaxChars);
          const output = answer.cut ? `${answer.text}\n[Result cut: longer than ${answer.text.length} characters.]` : parsed(answer.text);
          return new ToolMessage({ tool_call_id: toolCallId, name, content: model.text, artifact: { output, truncated: model.truncated || answer.cut } });
        } catch (error) {
          if (isGraphInterrupt(error) || call.signal?.aborted) throw error;
          if (!isAirlockError(error) || error.code !== 'VALIDATION_ERROR') deps.onError?.(error instanceof Error ? error.message : String(error));
          return fail(runArgs, decision, isAirlockError(error) ? error.code : 'TOOL_FAILURE', error instanceof Error ? error.message : String(error));
        }
      };
      return gatedCall({
        name, builtin: op.defaultAction, schema: op.schema, labels, grantScope,
        prompt: (a) => openApiPrompt(server, op, a),
        refused: (a, decision, how, code) => finish(a, decision, how, code, false),
        execute,
      }, user, args, call);
    },
  };
}
