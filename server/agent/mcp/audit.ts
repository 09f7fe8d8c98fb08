/**
 * Audit rows for MCP calls, in the api's audit_log shape (the gateway writes them: an MCP server is
 * not our api, so nobody else would). Both identities come from the tokens the call carried; the
 * user's was verified by the gateway at /chat, so reading its claims here needs no second check.
 * Method `MCP`, path `mcp://<server>/<tool>`, operation the model-facing name.
 * @module
 */
import type { AuditEntry, AuditOutcome } from '../../db/audit.ts';
import type { PolicyDecision } from '../../policy/index.ts';
import { claimString, tokenClaims } from '../token-claims.ts';
import type { ToolCallContext } from '../tool-source.ts';

/** Where MCP audit rows go (the gateway passes one that writes audit_log). */
export type McpAuditSink = (entry: AuditEntry) => Promise<void>;

/** How a call ended: ran, refused by policy, not approved by the user, or failed. */
export type McpCallOutcome = 'success' | 'refused' | 'not_approved' | 'failed';

const STATUS: Record<McpCallOutcome, { outcome: AuditOutcome; status: number }> = {
  success: { outcome: 'success', status: 200 },
  refused: { outcome: 'denied', status: 403 },
  not_approved: { outcome: 'denied', status: 403 },
  failed: { outcome: 'error', status: 502 },
};


/** The audit row of one MCP call. Pure. */
export function mcpAuditEntry(call: {
  server: string;
  tool: string;
  name: string;
  args: Record<string, unknown>;
  result: McpCallOutcome;
  /** What the policy decided before the call: allow, caution, require_approval (then approved or not) or deny. */
  decision: Pick<PolicyDecision, 'action' | 'scope' | 'matched'>;
  errorCode?: string | null;
  userToken: string;
  serviceToken?: string;
  toolCallId: string;
  conversationId: string;
  durationMs: number | null;
  /** Another source's method and path (an OpenAPI call: `HTTP`, `POST openapi://<server>/<path>`). */
  method?: string;
  path?: string;
}): AuditEntry {
  const user = tokenClaims(call.userToken);
  const { outcome, status } = STATUS[call.result];
  return {
    serviceActor: claimString(tokenClaims(call.serviceToken).sub) ?? 'airlock-gateway',
    userId: claimString(user.sub),
    username: claimString(user.username),
    userRole: claimString(user.role),
    operation: call.name,
    method: call.method ?? 'MCP',
    path: call.path ?? `mcp://${call.server}/${call.tool}`,
    arguments: call.args,
    outcome,
    statusCode: status,
    errorCode: call.errorCode ?? null,
    toolCallId: call.toolCallId,
    conversationId: call.conversationId,
    durationMs: call.durationMs === null ? null : Math.round(call.durationMs),
    policyAction: call.decision.action,
    policyScope: call.decision.scope,
    policyMatched: call.decision.matched,
  };
}

/** Writes the audit row of one call's outcome (MCP or OpenAPI); `timed`: with the call's duration. */
export type CallAuditor = (args: Record<string, unknown>, decision: PolicyDecision, result: McpCallOutcome, errorCode: string | null, timed: boolean) => Promise<void>;

/** The auditor of one call, its clock started now; an audit failure is logged, never the call's. */
export function callAuditor(
  sink: McpAuditSink | undefined,
  call: ToolCallContext,
  what: { server: string; tool: string; name: string; method?: string; path?: string },
  warn?: (message: string, error: unknown) => void,
): CallAuditor {
  const started = performance.now();
  return async (args, decision, result, errorCode, timed) => {
    if (!sink) return;
    const ctx = call.run;
    const serviceToken = await ctx.serviceToken.get().catch(() => undefined);
    const entry = mcpAuditEntry({
      ...what, args, result, decision, errorCode, userToken: ctx.userToken, serviceToken,
      toolCallId: call.toolCallId, conversationId: ctx.conversationId, durationMs: timed ? performance.now() - started : null,
    });
    await sink(entry).catch((error) => warn?.(`writing the audit row of ${what.name} failed`, error));
  };
}
