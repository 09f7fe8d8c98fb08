/**
 * The MCP server for one HTTP caller: tools/list from the endpoints, tools/call running the
 * endpoint to its end with the caller's identity (the same admission and owner caps as `/run`).
 * As upstream: `?tools=a,b` on the server's URL limits the tools listed and callable, and
 * resources/list, resources/templates/list and prompts/list answer (empty: no endpoint is a
 * resource or a prompt here) rather than -32601.
 * Arguments go through the call API's keyword check and the usual input validation; a bad one is
 * a tool error, never a crash. The MCP request's abort (client cancel, lost stream) aborts the handler.
 * @module
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { keywordArgs } from '../call-args.ts';
import type { GradioContext } from '../context.ts';
import { callToEnd, type DirectCallInput } from '../direct-call.ts';
import { isGradioError } from '../errors.ts';
import { describeError } from '../event-runner.ts';
import type { OwnerKey } from '../ownership.ts';
import type { RequestHeaders } from '../types.ts';
import { isRejection, normalizeInputs } from '../validate.ts';
import { mcpTools, toolError, toolResult } from './tools.ts';

/** Who calls: what the plugin's auth hook found for the HTTP request. */
export interface McpCaller {
  identity: unknown;
  owner: OwnerKey;
  headers: RequestHeaders;
  /** Whether the transport can carry a server->client request mid-call (session transports only). */
  canElicit: boolean;
  /** The tools `?tools=` names (selectedTools), or null for all. */
  selected: ReadonlySet<string> | null;
}

/** `?tools=a,b` as upstream reads it (a comma list; present but empty selects none), or null when absent. */
export function selectedTools(query: unknown): ReadonlySet<string> | null {
  const value = (query as Record<string, unknown> | undefined)?.tools;
  if (value === undefined) return null;
  const list = Array.isArray(value) ? value.join(',') : String(value);
  return new Set(list.split(',').map((t) => t.trim()).filter(Boolean));
}

/** Calls one tool call may chain through elicitation answers. */
const ELICIT_ROUNDS_MAX = 5;

/**
 * With a progressToken (the client asked for progress), the handler's `log` and `progress`
 * messages become MCP progress notifications, as upstream turns status updates into them.
 */
function progressNotifier(token: string | number | undefined, send: (notification: any) => Promise<void>): Pick<DirectCallInput, 'log' | 'progress'> {
  if (token === undefined) return {};
  let step = 0;
  // `progress` must only grow (MCP): a step count, the handler's own figures go into the message.
  const notify = (message: string) => void send({ method: 'notifications/progress', params: { progressToken: token, progress: ++step, message } }).catch(() => {});
  return {
    log: (_level, message) => notify(message),
    progress: (units) => {
      const unit = units[0];
      if (!unit) return;
      const title = unit.desc ? `Progress ${unit.desc}` : 'Progress';
      if (typeof unit.index === 'number' && typeof unit.length === 'number') notify(`${title}: Step ${unit.index} of ${unit.length}`);
      else notify(title);
    },
  };
}

/** A Server answering tools/list and tools/call for this caller. */
export function createMcpServer(ctx: GradioContext, caller: McpCaller, log: { warn(obj: object, msg?: string): void }): Server {
  const server = new Server({ name: ctx.options.title ?? 'Gradio', version: '1.0.0' }, { capabilities: { tools: {}, resources: {}, prompts: {} } });
  const offered = (name: string) => caller.selected === null || caller.selected.has(name);
  const tools = mcpTools(ctx.endpoints).filter((t) => offered(t.name));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [] }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const fnIndex = ctx.endpoints.findIndex((e) => e.apiName === name && e.mcp !== false);
    if (fnIndex < 0) return toolError('Error', `Unknown tool for this Gradio app: ${name}`);
    if (!offered(name)) return toolError('Error', `Tool '${name}' is not in the selected tools list`);
    const endpoint = ctx.endpoints[fnIndex];
    const elicit = endpoint.mcp ? endpoint.mcp.elicit : undefined;
    const mayAsk = Boolean(elicit && caller.canElicit && server.getClientCapabilities()?.elicitation?.form);
    const notifier = progressNotifier(request.params._meta?.progressToken, extra.sendNotification);
    // MCP has no way back into a run: a cancelled or dropped tool call is the user's cancel.
    const controller = new AbortController();
    extra.signal.addEventListener('abort', () => controller.abort(new Error('The MCP request was cancelled.')), { once: true });
    try {
      let argumentsNow: unknown = request.params.arguments ?? {};
      for (let round = 0; ; round++) {
        const args = keywordArgs(endpoint, argumentsNow);
        if (isRejection(args)) return toolError('Error', args.detail);
        const data = normalizeInputs(endpoint, args.data);
        if (isRejection(data)) return toolError('Error', data.detail);
        const outputs = await callToEnd(ctx, fnIndex, { data, eventData: null, identity: caller.identity, owner: caller.owner, headers: caller.headers, ...notifier, cancelSignal: controller.signal, via: 'mcp' }, controller);
        const question = mayAsk && round < ELICIT_ROUNDS_MAX ? elicit!(outputs) : null;
        if (!question) return toolResult(outputs);
        let answer: Parameters<typeof question.next>[0];
        try {
          answer = (await server.elicitInput({ mode: 'form', message: question.message, requestedSchema: question.requestedSchema } as never, { signal: extra.signal, ...(question.timeoutMs ? { timeout: question.timeoutMs } : {}) })) as typeof answer;
        } catch (error) {
          // No answer (timeout, client error): the result as it stands still says what to do.
          if (controller.signal.aborted) throw error;
          log.warn({ err: error, endpoint: endpoint.apiName }, 'gradio MCP elicitation failed');
          return toolResult(outputs);
        }
        const next = question.next(answer);
        if (!next) return toolResult(outputs);
        argumentsNow = next;
      }
    } catch (error) {
      if (isGradioError(error)) return toolError('Error', error.message); // refused: queue full, owner's share
      if (!controller.signal.aborted) log.warn({ err: error, endpoint: endpoint.apiName }, 'gradio MCP tool failed');
      const { title, message } = describeError(error);
      return toolError(title, message);
    }
  });
  return server;
}
