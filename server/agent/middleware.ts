/**
 * The agent's model-call middleware: offers only the tools selected for the current request and
 * not denied by the tool policy (all tools stay executable, so a resumed run can still run a paused call), and turns model failures
 * into LLM_UNAVAILABLE once ChatOpenAI's own bounded retries are spent.
 * @module
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { getConfig, isGraphInterrupt } from '@langchain/langgraph';
import { z } from 'zod';
import { createMiddleware } from 'langchain';
import { AirlockError, isAirlockError } from '../errors.ts';
import { chatResponse, chatSpan } from '../telemetry/spans.ts';
import { contentText } from './events.ts';
import { rankExternalTools } from './select-external.ts';
import { getToolsForQuery, selectionQuery, type Embedder, type ToolInfo, type Turn } from './select-tools.ts';
import { runAllowsTool, runToolRefusal } from './run-tool-allowlist.ts';
import { NO_USER, type ToolSelection, type ToolUser } from './tool-source.ts';
import { CONTEXT_KEY, errorContent, type ToolContext } from './tools/index.ts';

/** The run's context (tools/context.ts) from the middleware's runtime, else the ambient config. */
function runContext(runtime: { configurable?: Record<string, unknown> } | undefined): Partial<ToolContext> {
  const fromRuntime = runtime?.configurable?.[CONTEXT_KEY];
  if (fromRuntime) return fromRuntime as ToolContext;
  try {
    return (getConfig()?.configurable?.[CONTEXT_KEY] as ToolContext | undefined) ?? {};
  } catch {
    return {};
  }
}

/**
 * Stands in for a tool the run's policy refuses: it runs through the tool node like the real one
 * (so the call shows as a tool start and a FORBIDDEN tool error in the run's events and trace),
 * but does nothing.
 */
function refusingTool(name: string, message: string) {
  return tool(
    async (_args: unknown, runtime: { toolCallId?: string; toolCall?: { id?: string } }) =>
      new ToolMessage({ tool_call_id: runtime.toolCallId ?? runtime.toolCall?.id ?? 'unknown', name, status: 'error', content: errorContent('FORBIDDEN', message), artifact: { code: 'FORBIDDEN' } }),
    { name, description: 'Refused by the run tool_policy.', schema: z.object({}).passthrough() },
  );
}

/** A human message's own words: its text, or its first text part (the parts after it are attachments). */
function userWords(content: unknown): string {
  if (!Array.isArray(content)) return contentText(content);
  const first = content.find((p) => p && typeof p === 'object' && (p as { type?: string }).type === 'text');
  return first ? contentText([first]) : '';
}

function toTurn(m: BaseMessage): Turn {
  const text = contentText(m.content);
  // Attached files never choose tools: a log that mentions "deploy" is not a request to deploy.
  if (HumanMessage.isInstance(m)) return { role: 'user', text: userWords(m.content) };
  if (AIMessage.isInstance(m)) return { role: 'assistant', text, hasToolCalls: (m.tool_calls?.length ?? 0) > 0 };
  if (ToolMessage.isInstance(m)) return { role: 'tool', text };
  return { role: 'system', text };
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && /abort/i.test(error.name);
}

export interface AgentMiddlewareOptions {
  /** The tools the sources offer this user now: `rules` ones go through seed 003's keyword table,
   * `ranked` ones are always candidates, the best `offerTopN` offered. */
  offered: (user: ToolUser) => Array<ToolInfo & { selection: ToolSelection }>;
  embed?: Embedder;
  prefetchAvailable?: boolean;
  offerTopN?: number;
  /** The model's name and endpoint (the `chat <model>` span, server/telemetry). */
  model: { name: string; baseUrl?: string };
}

/** What a model answer says about itself, for its span: LangChain's usage_metadata and response_metadata. */
function answerFacts(answer: unknown): Parameters<typeof chatResponse>[1] {
  if (!AIMessage.isInstance(answer)) return {};
  const usage = answer.usage_metadata;
  const meta = answer.response_metadata as { finish_reason?: unknown; model_name?: unknown } | undefined;
  return {
    inputTokens: usage?.input_tokens, outputTokens: usage?.output_tokens,
    finishReason: typeof meta?.finish_reason === 'string' ? meta.finish_reason : undefined,
    model: typeof meta?.model_name === 'string' ? meta.model_name : undefined,
  };
}

const infoOf = ({ name, description }: ToolInfo): ToolInfo => ({ name, description });

/** Creates the tool-selection + model-error middleware. */
export function createAgentMiddleware(options: AgentMiddlewareOptions) {
  return createMiddleware({
    name: 'AirlockToolSelection',
    wrapModelCall: async (request, handler) => {
      const ctx = runContext(request.runtime as never);
      const query = selectionQuery(request.messages.map(toTurn));
      const offered = options.offered(ctx.user ?? NO_USER);
      const catalog = offered.filter((t) => t.selection === 'rules').map(infoOf);
      const names = await getToolsForQuery(query, options.prefetchAvailable ?? false, options.embed, catalog);
      const ranked = offered.filter((t) => t.selection === 'ranked').map(infoOf);
      names.push(...(await rankExternalTools(query, ranked, options.offerTopN ?? 5, options.embed)));
      // Offered: what the run's tool_policy allows (headless runs; a refused schema never reaches
      // the model) and the tool policy does not deny this user (its call would be refused anyway).
      const denied = (name: string) => ctx.policy?.(name).action === 'deny';
      const tools = request.tools.filter(
        (t) => 'name' in t && typeof t.name === 'string' && names.includes(t.name) && runAllowsTool(ctx.toolPolicy, t.name) && !denied(t.name),
      );
      // The caller's system messages (headless runs) go before the agent's own.
      const systemMessage = ctx.callerSystem ? new SystemMessage(`${ctx.callerSystem}\n\n${contentText(request.systemMessage.content)}`) : request.systemMessage;
      const span = chatSpan({ model: options.model.name, baseUrl: options.model.baseUrl, conversationId: ctx.conversationId, parent: ctx.trace });
      try {
        const answer = await handler({ ...request, tools, systemMessage });
        chatResponse(span, answerFacts(answer));
        return answer;
      } catch (error) {
        if (isGraphInterrupt(error) || isAbort(error) || isAirlockError(error)) {
          span.fail(isAirlockError(error) ? error.code : (error as Error).name);
          throw error;
        }
        span.fail('LLM_UNAVAILABLE', (error as Error)?.message);
        throw new AirlockError('LLM_UNAVAILABLE', undefined, { cause: error });
      } finally {
        span.end();
      }
    },
    // Second enforcement point: a call the policy refuses never reaches the real tool (a model may
    // name a tool it was not offered; a resumed run applies the policy stored with it).
    wrapToolCall: async (request, handler) => {
      const { toolPolicy } = runContext(request.runtime as never);
      const name = request.toolCall.name;
      if (!toolPolicy || runAllowsTool(toolPolicy, name)) return handler(request);
      return handler({ ...request, tool: refusingTool(name, runToolRefusal(toolPolicy, name).message) as never });
    },
  });
}
