/**
 * Builds a backend tool: zod schema -> HTTP request, routed by the tool policy (server/policy: allow,
 * caution, require_approval -> the approval pause, deny -> refused here, the api never called) and
 * failures turned into error ToolMessages so the agent carries on.
 *
 * Why `interrupt()` inside the tool (createAgent, graph version v2) and not humanInTheLoopMiddleware
 * (notes §1):
 * - v2 runs each tool call as its own task, so parallel dangerous calls each show their own
 *   interrupt with its own id, finished siblings are not re-run, and `resume()` sends an
 *   interrupt-id map (a plain value would apply to every pending interrupt).
 * - Mixed batches are safe: a safe sibling just runs and gets its ToolMessage; a denied call answers
 *   with its own error ToolMessage. The middleware drops approved/auto-approved siblings of a rejected
 *   call and leaves tool_calls without replies (pitfalls 1 and 2).
 * - The permission check runs before the pause, so a viewer asking to deploy gets FORBIDDEN at once.
 * - The tool re-runs from the top on resume: nothing before `interrupt()` has side effects (the
 *   capabilities check is a GET), and the POST after it carries the tool call id as Idempotency-Key.
 * - Input while paused (pitfall 3) is handled by the runtime, which closes dangling calls first.
 * @module
 */
import { ToolMessage } from '@langchain/core/messages';
import { tool, type ToolRuntime } from '@langchain/core/tools';
import { interrupt, isGraphInterrupt } from '@langchain/langgraph';
import type { z } from 'zod';
import { AirlockError, isAirlockError } from '../../errors.ts';
import { toolPath, toolSpec, type ToolName, type ToolSpec } from '../../operations/index.ts';
import { stampOf, type PolicyDecision } from '../../policy/index.ts';
import type { ApprovalDecision, ApprovalRequest } from '../types.ts';
import { claimString, tokenClaims } from '../token-claims.ts';
import { callBackend, type BackendRequest } from './backend.ts';
import { storedBeforeEffect, toolContext, type ToolContext } from './context.ts';

/** The parts of a backend call that come from the model's arguments; method and path come from the catalog. */
export interface CallParts {
  params?: Record<string, string>;
  query?: BackendRequest['query'];
  body?: unknown;
}

export interface BackendToolSpec<S extends z.ZodObject> {
  /** The operation in server/operations: its endpoint, permission and approval need. */
  name: ToolName;
  /** What the model reads to choose the tool. */
  description: string;
  schema: S;
  call: (args: z.infer<S>) => CallParts;
}

/** The content of an error ToolMessage: JSON the model (and the offline model) can read. */
export function errorContent(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** An error ToolMessage: the model reads the JSON, the event mapping takes the code from the artifact. */
export function errorMessage(name: string, toolCallId: string, code: string, message: string): ToolMessage {
  return new ToolMessage({ tool_call_id: toolCallId, name, status: 'error', content: errorContent(code, message), artifact: { code } });
}

/**
 * Pauses the call for the user's decision (interrupt() throws now and returns the decision on
 * resume): null when approved, else why it did not run. Call it outside any try.
 */
export function askApproval(request: ApprovalRequest): { code: string; message: string } | null {
  return refusalOf(request.tool, interrupt(request) as ApprovalDecision);
}

/** Why a call did not run, from a negative decision. */
export function refusalOf(tool: string, decision: ApprovalDecision): { code: string; message: string } | null {
  if (decision && typeof decision === 'object' && decision.approved === true) return null;
  const reason = (decision as { reason?: string } | undefined)?.reason;
  if (reason === 'expired') return { code: 'APPROVAL_EXPIRED', message: `Not done: the approval for ${tool} expired before it was confirmed.` };
  if (reason === 'mismatch') return { code: 'DENIED', message: `Not done: ${tool} was not the action the user approved.` };
  if (reason === 'superseded') return { code: 'SUPERSEDED', message: `Not done: the request to run ${tool} was replaced by a newer message.` };
  return { code: 'DENIED', message: `Not done: the user denied ${tool}.` };
}

async function assertAllowed(ctx: ToolContext, name: string, meta: { toolCallId: string; signal?: AbortSignal }): Promise<void> {
  const caps = (await callBackend(ctx, { method: 'GET', path: '/api/tools/capabilities' }, meta)) as {
    tools?: Array<{ name: string; allowed: boolean }>;
  };
  const entry = caps.tools?.find((t) => t.name === name);
  if (entry && !entry.allowed) throw new AirlockError('FORBIDDEN', `You are not allowed to run ${name}.`);
}

/** The audit row of a call the policy denied: the api never sees it, so the gateway writes it. */
export async function auditRefusal(ctx: ToolContext, call: { operation: ToolSpec; path: string; args: Record<string, unknown>; toolCallId: string; decision: PolicyDecision }): Promise<void> {
  if (!ctx.audit) return;
  const user = tokenClaims(ctx.userToken);
  const service = tokenClaims(await ctx.serviceToken.get().catch(() => undefined));
  await ctx.audit({
    serviceActor: claimString(service.sub) ?? 'airlock-gateway', userId: claimString(user.sub), username: claimString(user.username), userRole: claimString(user.role),
    operation: call.operation.name, method: call.operation.method, path: call.path, arguments: call.args,
    outcome: 'denied', statusCode: 403, errorCode: 'FORBIDDEN', toolCallId: call.toolCallId, conversationId: ctx.conversationId, durationMs: null,
    policyAction: call.decision.action, policyScope: call.decision.scope, policyMatched: call.decision.matched,
  });
}

/** The model's words for a call the policy refuses. */
export function policyDenial(tool: string, decision: PolicyDecision): { code: 'FORBIDDEN'; message: string } {
  return { code: 'FORBIDDEN', message: `Not done: the tool policy does not allow ${tool} (${decision.scope}).` };
}

/** A LangChain tool that calls the backend API. */
export function defineBackendTool<S extends z.ZodObject>(spec: BackendToolSpec<S>) {
  const operation = toolSpec(spec.name);
  const backendRequest = (args: z.infer<S>): BackendRequest => {
    const { params, query, body } = spec.call(args);
    return { method: operation.method, path: toolPath(operation, params), query, body };
  };
  return tool(
    async (args: z.infer<S>, runtime: ToolRuntime) => {
      const toolCallId = runtime.toolCallId ?? runtime.toolCall?.id ?? 'unknown';
      const meta = { toolCallId, signal: runtime.signal };
      const fail = (error: unknown) => {
        if (isGraphInterrupt(error)) throw error;
        if (runtime.signal?.aborted) throw error;
        if (isAirlockError(error)) return errorMessage(spec.name, toolCallId, error.code, error.message);
        return errorMessage(spec.name, toolCallId, 'TOOL_FAILURE', error instanceof Error ? error.message : String(error));
      };

      let ctx: ToolContext;
      let decision: PolicyDecision;
      try {
        ctx = toolContext(runtime);
        decision = ctx.policy(spec.name);
        if (decision.action === 'deny') {
          await auditRefusal(ctx, { operation, path: backendRequest(args).path, args: args as Record<string, unknown>, toolCallId, decision }).catch(() => {});
          const refusal = policyDenial(spec.name, decision);
          return errorMessage(spec.name, toolCallId, refusal.code, refusal.message);
        }
        // Before a pause only: a resumed call was checked then, and the api checks the call itself
        // again (its RBAC on the user as they are now decides; a role removed meanwhile is refused there).
        if (decision.action === 'require_approval' && !ctx.resumedCalls?.has(toolCallId)) await assertAllowed(ctx, spec.name, meta);
      } catch (error) {
        return fail(error);
      }
      if (decision.action === 'require_approval') {
        // Outside any try: interrupt() works by throwing. On resume it returns the decision.
        const request: ApprovalRequest = { kind: 'approval', tool: spec.name, args: args as Record<string, unknown>, toolCallId, policy: stampOf(decision) };
        const refusal = askApproval(request);
        if (refusal) return errorMessage(spec.name, toolCallId, refusal.code, refusal.message);
      }
      if (operation.method !== 'GET') await storedBeforeEffect(ctx, toolCallId);
      try {
        // The decision travels with the call itself (not the permission check before a pause): the api's audit row keeps it.
        return JSON.stringify(await callBackend(ctx, backendRequest(args), { ...meta, policy: stampOf(decision) }));
      } catch (error) {
        return fail(error);
      }
    },
    { name: spec.name, description: spec.description, schema: spec.schema },
  );
}
