/**
 * The LangChain side of the ToolSource seam (tool-source.ts): every tool a source describes becomes
 * one LangChain tool whose body is `source.call(...)` with the run's user and context, so the graph
 * (graph.ts) executes tools of any kind the same way. interrupt() inside `call` works as it did
 * inside a hand-written tool: it runs in the tool's own task and config. Each call is one
 * `execute_tool` span (server/telemetry), the child of the turn's, naming the tool's source.
 * @module
 */
import { ToolMessage } from '@langchain/core/messages';
import { tool, type StructuredToolInterface, type ToolRuntime } from '@langchain/core/tools';
import { isGraphInterrupt } from '@langchain/langgraph';
import type { Span } from '../telemetry/index.ts';
import { toolSpan } from '../telemetry/spans.ts';
import type { ToolResult, ToolSource } from './tool-source.ts';
import { toolContext, type ToolContext } from './tools/context.ts';
import { errorMessage } from './tools/define.ts';

/** The executable tools of every source, in source order then each source's own order. */
export function sourceTools(sources: readonly ToolSource[]): StructuredToolInterface[] {
  return sources.flatMap((source) => {
    const { kind, prefixes } = source.describe();
    return source.describe().tools.map((d) => {
      // An MCP tool's server is its name's prefix (mcp/names.ts); a built-in tool has none.
      const server = prefixes.find((p) => d.name.startsWith(p))?.replace(/_$/, '');
      return tool(
        async (args: Record<string, unknown>, runtime: ToolRuntime) => {
          const toolCallId = runtime.toolCallId ?? runtime.toolCall?.id ?? 'unknown';
          let run: ToolContext;
          try {
            run = toolContext(runtime);
          } catch (error) {
            return errorMessage(d.name, toolCallId, 'INTERNAL', (error as Error).message);
          }
          const span = toolSpan({ tool: d.name, toolCallId, source: kind, server, parent: run.trace });
          try {
            return ended(span, await source.call(run.user, d.name, args, { toolCallId, signal: runtime.signal, run, span }));
          } catch (error) {
            // A pause for approval is not a failure: the call runs again, in its own span, on resume.
            if (isGraphInterrupt(error)) span.set({ 'airlock.tool.paused': true });
            else span.fail(error instanceof Error ? error.name : 'Error', (error as Error)?.message);
            span.end();
            throw error;
          }
        },
        { name: d.name, description: d.description, schema: d.schema as never },
      ) as StructuredToolInterface;
    });
  });
}

/** Ends the call's span, failed when the result is an error (its code from `artifact.code`). */
function ended(span: Span, result: ToolResult): ToolResult {
  if (result instanceof ToolMessage && result.status === 'error') {
    const code = (result.artifact as { code?: unknown } | undefined)?.code;
    span.fail(typeof code === 'string' ? code : 'TOOL_FAILURE');
  }
  span.end();
  return result;
}
