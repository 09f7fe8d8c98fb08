/**
 * The spans Airlock makes, named once (CONTRACTS, "Telemetry"): names and attributes follow the
 * OpenTelemetry GenAI semantic conventions where they exist (`gen_ai.*`: invoke_agent, chat,
 * execute_tool) and the HTTP client ones for backend calls; Airlock's own are `airlock.*`.
 * https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/ and gen-ai-agent-spans/
 * @module
 */
import { startSpan, telemetryOn, type Span } from './index.ts';

/** The agent's name in `invoke_agent airlock` and `gen_ai.agent.name`. */
export const AGENT_NAME = 'airlock';

/** One engine turn: the run, its model and tool calls, its commits. */
export function invokeAgentSpan(turn: { conversationId: string; runId: string; kind: 'message' | 'decision' | 'retry' | 'fork' }): Span {
  return startSpan(`invoke_agent ${AGENT_NAME}`, {
    attributes: {
      'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': AGENT_NAME, 'gen_ai.conversation.id': turn.conversationId,
      'airlock.run.id': turn.runId, 'airlock.turn.kind': turn.kind,
    },
  });
}

/** One model call (OpenAI-compatible chat completions). */
export function chatSpan(call: { model: string; baseUrl?: string; conversationId?: string; parent?: Span | null }): Span {
  const server = telemetryOn() && call.baseUrl ? safeUrl(call.baseUrl) : null;
  return startSpan(`chat ${call.model}`, {
    parent: call.parent, kind: 'client',
    attributes: {
      'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': call.model, 'gen_ai.conversation.id': call.conversationId,
      'server.address': server?.hostname, 'server.port': server ? Number(server.port || (server.protocol === 'https:' ? 443 : 80)) : undefined,
    },
  });
}

/** What a model's answer said about itself (LangChain's usage_metadata / response_metadata), when it did. */
export function chatResponse(span: Span, answer: { inputTokens?: number; outputTokens?: number; finishReason?: string; model?: string }): void {
  span.set({
    'gen_ai.usage.input_tokens': answer.inputTokens, 'gen_ai.usage.output_tokens': answer.outputTokens,
    'gen_ai.response.finish_reasons': answer.finishReason ? [answer.finishReason] : undefined, 'gen_ai.response.model': answer.model,
  });
}

/** One tool call, with where the tool comes from (`builtin`, `mcp` and its server). */
export function toolSpan(call: { tool: string; toolCallId: string; source: string; server?: string; parent?: Span | null }): Span {
  return startSpan(`execute_tool ${call.tool}`, {
    parent: call.parent,
    attributes: {
      'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.tool, 'gen_ai.tool.call.id': call.toolCallId, 'gen_ai.tool.type': 'function',
      'airlock.tool.source': call.source, 'airlock.tool.server': call.server,
    },
  });
}

/** One atomic ledger commit of a turn (its events and the transcript's writes, one transaction). */
export function ledgerCommitSpan(turn: Span, runId: string): Span {
  return startSpan('airlock.ledger.commit', { parent: turn, attributes: { 'airlock.run.id': runId } });
}

/**
 * An approval's wait, made when it is decided: from its request (`created_at`) to its decision,
 * the child of the turn that paused for it (the `traceparent` stored on its row), linked to the
 * turn that decided it.
 */
export function recordApprovalWait(wait: {
  approvalId: string; tool: string; toolCallId: string; conversationId: string; requestedAt: Date; decidedAt: Date;
  outcome: string; reason: string; parent: string | null; decidedIn: Span;
}): void {
  startSpan('airlock.approval.wait', {
    parent: wait.parent, start: wait.requestedAt, links: [wait.decidedIn],
    attributes: {
      'airlock.approval.id': wait.approvalId, 'airlock.approval.outcome': wait.outcome, 'airlock.approval.reason': wait.reason,
      'gen_ai.tool.name': wait.tool, 'gen_ai.tool.call.id': wait.toolCallId, 'gen_ai.conversation.id': wait.conversationId,
    },
  }).end(wait.decidedAt);
}

/** One HTTP call from a tool to the backend API (HTTP client conventions: `{method} {route}`). */
export function backendCallSpan(call: { method: string; route: string; url: string; parent?: Span | null }): Span {
  const url = telemetryOn() ? safeUrl(call.url) : null;
  return startSpan(`${call.method} ${call.route}`, {
    parent: call.parent, kind: 'client',
    attributes: {
      'http.request.method': call.method, 'url.full': call.url, 'url.template': call.route,
      'server.address': url?.hostname, 'server.port': url ? Number(url.port || (url.protocol === 'https:' ? 443 : 80)) : undefined,
    },
  });
}

function safeUrl(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}
