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
import { interrupt, isGraphInterrupt } from '@langchain/langgraph';
import { z } from 'zod';
import { AirlockError, isAirlockError } from '../../errors.ts';
import { argumentLabels, toolPath, toolRoute, toolSpec, type ToolName, type ToolSpec } from '../../operations/index.ts';
import { approvalTermsOf, grantTerms, stampOf, type PolicyDecision, type PolicyStamp } from '../../policy/index.ts';
import { checkArguments, editedResult } from '../edited-call.ts';
import type { ApprovalDecision, ApprovalRequest } from '../types.ts';
import { claimString, tokenClaims } from '../token-claims.ts';
import { callBackend, type BackendRequest } from './backend.ts';
import { storedBeforeEffect, type ToolContext } from './context.ts';
import { grantedCall } from './grant.ts';
import { askedAgain, backendPreview, isStateChanged, MAX_STATE_CHANGES, wouldDoNothing } from './preview.ts';
import type { ToolCallContext, ToolResult } from '../tool-source.ts';

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

/** The result of a call naming a tool its source does not have (ToolSource.call). */
export function unknownTool(tool: string, call: ToolCallContext): ToolMessage {
  return errorMessage(tool, call.toolCallId, 'NOT_FOUND', `No tool named ${tool} in this source.`);
}

/**
 * Pauses the call for the user's decision (interrupt() throws now and returns the decision on
 * resume): null when approved, else why it did not run. Call it outside any try.
 */
export function askApproval(request: ApprovalRequest): { code: string; message: string } | null {
  return refusalOf(request.tool, interrupt(request) as ApprovalDecision);
}

/** Like askApproval, with the approved decision itself (its `state_hash` binds the execution). */
export function askDecision(request: ApprovalRequest): { refusal: { code: string; message: string } } | { approved: Extract<ApprovalDecision, { approved: true }> } {
  const decision = interrupt(request) as ApprovalDecision;
  const refusal = refusalOf(request.tool, decision);
  return refusal ? { refusal } : { approved: decision as Extract<ApprovalDecision, { approved: true }> };
}

/** Why a call did not run, from a negative decision. */
export function refusalOf(tool: string, decision: ApprovalDecision): { code: string; message: string } | null {
  if (decision && typeof decision === 'object' && decision.approved === true) return null;
  const reason = (decision as { reason?: string } | undefined)?.reason;
  if (reason === 'expired') return { code: 'APPROVAL_EXPIRED', message: `Not done: the approval for ${tool} expired before it was confirmed.` };
  if (reason === 'mismatch') return { code: 'DENIED', message: `Not done: ${tool} was not the action the user approved.` };
  if (reason === 'superseded') return { code: 'SUPERSEDED', message: `Not done: the request to run ${tool} was replaced by a newer message.` };
  const note = (decision as { note?: unknown } | undefined)?.note;
  // The approver's reason, quoted as theirs: the model is told why, and can act on it (issue 27 item 4).
  if (typeof note === 'string' && note.trim()) return { code: 'DENIED', message: `Not done: the user denied ${tool}. Their reason: ${JSON.stringify(note.trim().slice(0, 500))}` };
  return { code: 'DENIED', message: `Not done: the user denied ${tool}.` };
}

async function assertAllowed(ctx: ToolContext, name: string, meta: Parameters<typeof callBackend>[2]): Promise<void> {
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

/**
 * The arguments an approver's edit runs with, checked again at execution (the decision step
 * checked them as the requester; the policy may have changed since): the tool's schema, and the
 * policy's decision for the edited call, which must not deny it. A refusal runs nothing.
 */
export function editedRun(tool: string, schema: object, edited: Record<string, unknown>, ctx: ToolContext): { args: Record<string, unknown>; policy: PolicyStamp } | { refusal: { code: string; message: string } } {
  const checked = checkArguments(schema, edited);
  if (!checked.ok) return { refusal: { code: 'VALIDATION_ERROR', message: `Not done: the edited arguments of ${tool} do not fit it (${checked.fields.map((f) => `${f.path}: ${f.message}`).join('; ')}).` } };
  const decision = ctx.policy(tool, undefined, checked.args);
  if (decision.action === 'deny') return { refusal: policyDenial(tool, decision) };
  return { args: checked.args, policy: stampOf(decision) };
}

/** A built-in tool: what the model reads, and how one call runs (tools/source.ts serves them). */
export interface BackendTool<S extends z.ZodObject = z.ZodObject> {
  name: ToolName;
  description: string;
  schema: S;
  run(args: z.infer<S>, call: ToolCallContext): Promise<ToolResult>;
}

/** A tool that calls the backend API. */
export function defineBackendTool<S extends z.ZodObject>(spec: BackendToolSpec<S>): BackendTool<S> {
  const operation = toolSpec(spec.name);
  const labels = argumentLabels(z.toJSONSchema(spec.schema));
  const backendRequest = (args: z.infer<S>): BackendRequest => {
    const { params, query, body } = spec.call(args);
    return { method: operation.method, path: toolPath(operation, params), route: toolRoute(operation), query, body };
  };
  return {
    name: spec.name,
    description: spec.description,
    schema: spec.schema,
    async run(args: z.infer<S>, call: ToolCallContext): Promise<ToolResult> {
      const { toolCallId } = call;
      const meta = { toolCallId, signal: call.signal, span: call.span };
      const fail = (error: unknown) => {
        if (isGraphInterrupt(error)) throw error;
        if (call.signal?.aborted) throw error;
        if (isAirlockError(error)) return errorMessage(spec.name, toolCallId, error.code, error.message);
        return errorMessage(spec.name, toolCallId, 'TOOL_FAILURE', error instanceof Error ? error.message : String(error));
      };

      const ctx = call.run;
      let decision: PolicyDecision;
      try {
        decision = ctx.policy(spec.name, undefined, args as Record<string, unknown>);
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
      const policy = stampOf(decision);
      // A live grant that matches lets the call run without a card (issue 27 item 2); RBAC was
      // checked above and the api checks it again. A resumed call was decided already.
      let granted = false;
      try {
        granted = (await grantedCall(ctx, { tool: spec.name, args: args as Record<string, unknown>, toolCallId, decision })) !== null;
      } catch (error) {
        return fail(error);
      }
      if (decision.action !== 'require_approval' || granted) {
        if (operation.method !== 'GET') await storedBeforeEffect(ctx, toolCallId);
        try {
          // The decision travels with the call itself (not the permission check before a pause): the api's audit row keeps it.
          return JSON.stringify(await callBackend(ctx, backendRequest(args), { ...meta, policy }));
        } catch (error) {
          return fail(error);
        }
      }
      // The preview is read before the pause only (a resumed call's approver saw it already; its
      // state hash comes back with the decision). It never fails the call: no preview is "no preview".
      const preview = operation.approval?.preview && !ctx.resumedCalls?.has(toolCallId) ? await backendPreview(ctx, backendRequest(args), call.signal, call.span) : null;
      const terms = approvalTermsOf(decision.rule);
      // No grant for a call whose preview says it would do nothing (issue 37 item 6: "no such service").
      const grant = wouldDoNothing(preview) ? { grant: null } : grantTerms(decision, args as Record<string, unknown>, operation.approval?.scope);
      let request: ApprovalRequest = { kind: 'approval', tool: spec.name, args: args as Record<string, unknown>, toolCallId, policy, preview, labels, ...grant, ...(terms ? { terms } : {}) };
      for (let round = 0; ; round++) {
        // Outside any try: interrupt() works by throwing. On resume it returns the decision.
        const answer = askDecision(request);
        if ('refusal' in answer) return errorMessage(spec.name, toolCallId, answer.refusal.code, answer.refusal.message);
        // Edited before approval (issue 27 item 1): the approved arguments run, checked once more
        // against the schema and the policy, and the model is told (edited-call.ts).
        const edited = answer.approved.args ? editedRun(spec.name, spec.schema, answer.approved.args, ctx) : null;
        if (edited && 'refusal' in edited) return errorMessage(spec.name, toolCallId, edited.refusal.code, edited.refusal.message);
        const runArgs = (edited?.args ?? args) as z.infer<S>;
        await storedBeforeEffect(ctx, toolCallId);
        try {
          const result = JSON.stringify(await callBackend(ctx, backendRequest(runArgs), { ...meta, policy: edited?.policy ?? policy, ifMatch: answer.approved.state_hash }));
          return edited ? editedResult(spec.name, toolCallId, edited.args, result) : result;
        } catch (error) {
          if (!isStateChanged(error) || round >= MAX_STATE_CHANGES) return edited ? editedResult(spec.name, toolCallId, edited.args, fail(error)) : fail(error);
        }
        // The state changed since the approver's preview (412): nothing ran. Ask again, for the same
        // call, with a fresh preview (a second interrupt of this task: LangGraph gives it its own id).
        request = askedAgain(request, await backendPreview(ctx, backendRequest(args), call.signal, call.span));
      }
    },
  };
}
