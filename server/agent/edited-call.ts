/**
 * A call an approver edited before approving it (issue 27 item 1), on the agent's side: the check
 * of the edited arguments against the tool's input schema, and what the model is told.
 *
 * The honest transcript: the model's AIMessage keeps the tool call it proposed, and the ToolMessage
 * that answers it begins with a note naming the arguments the call really ran with (CONTRACTS §
 * "Edit, then approve"). So the model's next words describe what happened, and the checkpoint still
 * shows what it asked for. The card gets the result alone (the ToolMessage's artifact).
 * @module
 */
import { ToolMessage } from '@langchain/core/messages';
import { z } from 'zod';
import type { ToolResult } from './tool-source.ts';

export type ArgumentsCheck = { ok: true; args: Record<string, unknown> } | { ok: false; fields: Array<{ path: string; message: string }> };

/**
 * Pure: `args` checked against a tool's input schema (a zod object or a JSON schema), unknown
 * arguments refused: an approver may change values, never add arguments the tool does not take.
 */
export function checkArguments(schema: object, args: Record<string, unknown>): ArgumentsCheck {
  let strict: z.ZodType;
  try {
    strict = schema instanceof z.ZodObject ? schema.strict() : z.fromJSONSchema({ ...(schema as Record<string, unknown>), additionalProperties: false } as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    return { ok: false, fields: [{ path: '', message: `this tool's input schema cannot be checked here (${(error as Error).message}), so its arguments cannot be edited` }] };
  }
  const parsed = strict.safeParse(args);
  if (parsed.success) return { ok: true, args: parsed.data as Record<string, unknown> };
  return { ok: false, fields: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.code === 'unrecognized_keys' ? `unknown argument${i.keys.length > 1 ? 's' : ''} ${i.keys.join(', ')}` : i.message })) };
}

/** The words the model reads before the result of an edited call (one line: JSON has no raw newline). */
export function editNote(tool: string, args: Record<string, unknown>): string {
  return `Note: the user edited this call before approving it. ${tool} ran with these arguments, not the ones proposed: ${JSON.stringify(args)}`;
}

const NOTED = /^Note: the user edited this call before approving it\. \S+ ran with these arguments, not the ones proposed: (.*)\nResult: ([\s\S]*)$/;

/** Pure: a tool result's note read back (the offline model reads it as a model would): the arguments that ran, and the result. */
export function readEditNote(content: string): { args: Record<string, unknown>; result: string } | null {
  const m = NOTED.exec(content);
  if (!m) return null;
  try {
    return { args: JSON.parse(m[1]) as Record<string, unknown>, result: m[2] };
  } catch {
    return null;
  }
}

/**
 * The result of an edited call: the note, then the result, for the model; the result alone for
 * the card (artifact.output, as events.ts reads it). An error result keeps its shape, noted too.
 */
export function editedResult(tool: string, toolCallId: string, args: Record<string, unknown>, result: ToolResult): ToolMessage {
  const note = editNote(tool, args);
  if (typeof result === 'string') {
    let output: unknown = result;
    try {
      output = JSON.parse(result);
    } catch {
      // a plain text result: the card shows the text
    }
    return new ToolMessage({ tool_call_id: toolCallId, name: tool, content: `${note}\nResult: ${result}`, artifact: { output } });
  }
  const text = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  return new ToolMessage({ tool_call_id: toolCallId, name: tool, status: result.status, content: `${note}\nResult: ${text}`, artifact: result.artifact });
}
