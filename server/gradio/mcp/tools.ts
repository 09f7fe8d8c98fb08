/**
 * Endpoints as MCP tools, as Gradio's `mcp_server=True` offers them: the tool is named after the
 * endpoint, its input schema comes from the parameters, and its result is one text block per
 * output (a ChatMessage-like value `{content: "..."}` gives its content; other values their JSON).
 * An error ends as `isError` with `title: message`, as upstream raises it, naming the title once
 * (a message that already begins with it, such as `/chat`'s `CODE: detail`, is kept as it is). Pure.
 * @module
 */
import { parameterName, schemaOf } from '../components.ts';
import type { EndpointDefinition, JsonSchema } from '../types.ts';

/** A tool as MCP's tools/list lists it. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, JsonSchema>; required?: string[] };
}

/** The tools of a set of endpoints (those with `mcp: false` left out). */
export function mcpTools(endpoints: readonly EndpointDefinition<any>[]): McpTool[] {
  return endpoints.filter((e) => e.mcp !== false).map((endpoint) => {
    const chosen = endpoint.mcp ? endpoint.mcp.parameters : undefined;
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    endpoint.inputs.forEach((spec, i) => {
      const name = parameterName(spec, i);
      if (chosen && !(name in chosen)) return;
      const description = spec.description ?? spec.label;
      properties[name] = chosen?.[name] ?? { ...schemaOf(spec), description };
      if (!Object.prototype.hasOwnProperty.call(spec, 'default')) required.push(name);
    });
    return {
      name: endpoint.apiName,
      description: endpoint.description ?? '',
      inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}) },
    };
  });
}

/** The text an output value reads as. */
export function outputText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { content?: unknown }).content === 'string') return (value as { content: string }).content;
  return JSON.stringify(value ?? null);
}

/** A successful tool result: the texts, and the raw outputs as structured content. */
export function toolResult(outputs: unknown[]) {
  return {
    content: outputs.map((value) => ({ type: 'text' as const, text: outputText(value) })),
    structuredContent: { result: outputs },
  };
}

/** A failed tool result. */
export function toolError(title: string, message: string) {
  const text = title && message && !message.startsWith(`${title}: `) ? `${title}: ${message}` : message || title || 'Error!';
  return { content: [{ type: 'text' as const, text }], isError: true };
}
