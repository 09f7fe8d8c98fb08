/**
 * The agent's model-call middleware: offers only the tools selected for the current request and
 * not denied by the tool policy (all tools stay executable, so a resumed run can still run a paused call), and turns model failures
 * into LLM_UNAVAILABLE once ChatOpenAI's own bounded retries are spent.
 * @module
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { isGraphInterrupt } from '@langchain/langgraph';
import { createMiddleware } from 'langchain';
import { AirlockError, isAirlockError } from '../errors.ts';
import { contentText } from './events.ts';
import { rankExternalTools } from './select-external.ts';
import { getToolsForQuery, selectionQuery, type Embedder, type ToolInfo, type Turn } from './select-tools.ts';
import { CONTEXT_KEY, type ToolContext } from './tools/context.ts';

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
  catalog: ToolInfo[];
  embed?: Embedder;
  prefetchAvailable?: boolean;
  /** External (MCP) tools that may be offered now: always candidates, the best `externalTopN` offered. */
  external?: () => ToolInfo[];
  externalTopN?: number;
}

/** Creates the tool-selection + model-error middleware. */
export function createAgentMiddleware(options: AgentMiddlewareOptions) {
  return createMiddleware({
    name: 'AirlockToolSelection',
    wrapModelCall: async (request, handler) => {
      const query = selectionQuery(request.messages.map(toTurn));
      const names = await getToolsForQuery(query, options.prefetchAvailable ?? false, options.embed, options.catalog);
      const external = options.external?.() ?? [];
      names.push(...(await rankExternalTools(query, external, options.externalTopN ?? 5, options.embed)));
      // A tool the policy denies this user is never offered (its call would be refused anyway).
      const ctx = request.runtime?.configurable?.[CONTEXT_KEY] as ToolContext | undefined;
      const denied = (name: string) => ctx?.policy(name).action === 'deny';
      const tools = request.tools.filter((t) => 'name' in t && typeof t.name === 'string' && names.includes(t.name) && !denied(t.name));
      try {
        return await handler({ ...request, tools });
      } catch (error) {
        if (isGraphInterrupt(error) || isAbort(error) || isAirlockError(error)) throw error;
        throw new AirlockError('LLM_UNAVAILABLE', undefined, { cause: error });
      }
    },
  });
}
