/**
 * Pure mapping from `graph.stream(..., {streamMode: ["messages","updates","tools"]})` parts to
 * AgentEvents. The runtime owns the loop; this owns the shapes, and is table-tested.
 * @module
 */
import { isGraphInterrupt } from '@langchain/langgraph';
import { isAirlockError, isErrorCode } from '../errors.ts';
import { readEditNote } from './edited-call.ts';
import type { AgentEvent } from './types.ts';
import type { GrantUse } from './tools/context.ts';

/** What the mapping remembers within one run (mutated by `toAgentEvents`). */
export interface MappingState {
  /** toolCallId -> start time, to compute durationMs. */
  starts: Map<string, number>;
  /**
   * Starts of approval tools held back in a run that is not their resume: such a call pauses in
   * interrupt() (its start dropped) and re-runs from the top on resume; should it end without a
   * pause (refused before it), its start is shown with its end.
   */
  heldStarts: Map<string, AgentEvent & { type: 'tool_start' }>;
  approvalTools: ReadonlySet<string>;
  /**
   * Calls this run resumes with their decision: they cannot pause again, so their start goes out
   * when the call starts, and a long tool shows a running card (issue 30, finding 14).
   */
  resumedCalls: ReadonlySet<string>;
  /** True once the graph reported an interrupt. */
  interrupted: boolean;
  /** Calls that ran under a grant, without a card (the tool fills it, agent/tools/define.ts). */
  granted: ReadonlyMap<string, GrantUse>;
  /** Resumed calls an approver edited (issue 27): toolCallId -> the arguments they run with, shown as the call's input. */
  edited: ReadonlyMap<string, Record<string, unknown>>;
}

export function createMappingState(
  approvalTools: Iterable<string>,
  resumedCalls: Iterable<string> = [],
  granted: ReadonlyMap<string, GrantUse> = new Map(),
  edited: ReadonlyMap<string, Record<string, unknown>> = new Map(),
): MappingState {
  return { starts: new Map(), heldStarts: new Map(), approvalTools: new Set(approvalTools), resumedCalls: new Set(resumedCalls), interrupted: false, granted, edited };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null;

/** The text of message content: a string, or text blocks. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (isObj(b) && typeof b.text === 'string' && (b.type === 'text' || b.type === undefined) ? b.text : '')).join('');
  return '';
}

function messageType(m: Obj): string | undefined {
  const getType = (m as { _getType?: () => string })._getType;
  if (typeof getType === 'function') return getType.call(m);
  return typeof m.type === 'string' ? m.type : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The error of an error ToolMessage: its `{error:{code,message}}` content, or the raw text. An
 * edited call's content begins with the note meant for the model (edited-call.ts); the card gets
 * the tool's own error, not the note (issue 37 item 3).
 */
export function toolMessageError(message: Obj): { error: string; code?: ReturnType<typeof codeOf> } {
  const raw = contentText(message.content);
  const text = readEditNote(raw)?.result ?? raw;
  const data = parseJson(text);
  const artifactCode = isObj(message.artifact) ? message.artifact.code : undefined;
  const inner = isObj(data) && isObj(data.error) ? data.error : undefined;
  const error = typeof inner?.message === 'string' ? inner.message : text;
  return { error, code: codeOf(artifactCode ?? inner?.code) };
}

function codeOf(value: unknown) {
  return isErrorCode(value) ? value : undefined;
}

function withCode<T extends object>(event: T, code: ReturnType<typeof codeOf>): T {
  return code ? { ...event, code } : event;
}

function mapTools(chunk: Obj, state: MappingState, now: number): AgentEvent[] {
  const toolCallId = String(chunk.toolCallId ?? '');
  const tool = String(chunk.name ?? '');
  const release = (): AgentEvent[] => {
    const held = state.heldStarts.get(toolCallId);
    state.heldStarts.delete(toolCallId);
    return held ? [{ ...held, finished: true, ...grant() }] : [];
  };
  const grant = () => {
    const use = state.granted.get(toolCallId);
    return use ? { grant: use } : {};
  };
  switch (chunk.event) {
    case 'on_tool_start': {
      state.starts.set(toolCallId, now);
      // The input arrives as the JSON string of the arguments; the UI wants the object.
      // An edited call shows what runs, not what the model proposed.
      const input = state.edited.get(toolCallId) ?? (typeof chunk.input === 'string' ? parseJson(chunk.input) : chunk.input);
      const start: AgentEvent & { type: 'tool_start' } = { type: 'tool_start', tool, input, toolCallId };
      // Held only where it may still pause: a resumed call (or a call its policy allows) starts now.
      if (state.approvalTools.has(tool) && !state.resumedCalls.has(toolCallId)) {
        state.heldStarts.set(toolCallId, start);
        return [];
      }
      return [start];
    }
    case 'on_tool_end': {
      const started = state.starts.get(toolCallId) ?? now;
      const out = chunk.output;
      if (isObj(out) && messageType(out) === 'tool' && out.status === 'error') {
        const { error, code } = toolMessageError(out);
        return [...release(), withCode({ type: 'tool_error', tool, error, toolCallId }, code)];
      }
      // An MCP tool keeps its whole result for the card in the artifact (the model may read a cut).
      const artifact = isObj(out) && isObj(out.artifact) && 'output' in out.artifact ? out.artifact : undefined;
      const output = artifact ? artifact.output : isObj(out) && messageType(out) === 'tool' ? parseJson(contentText(out.content)) : out;
      return [...release(), { type: 'tool_end', tool, output, toolCallId, durationMs: Math.max(0, now - started), ...grant() }];
    }
    case 'on_tool_error': {
      // A pause is not a failure: the tool will run again on resume.
      if (isGraphInterrupt(chunk.error)) return [];
      const e = chunk.error;
      const code = isAirlockError(e) ? e.code : 'TOOL_FAILURE';
      const error = e instanceof Error ? e.message : String(e);
      return [...release(), { type: 'tool_error', tool, error, code, toolCallId }];
    }
    default:
      return [];
  }
}

/**
 * The AgentEvents for one stream part. `now` is the clock (ms). Tokens come only from the model
 * node's AI chunks (tool-call fragments have no text); tool messages in "messages" are ignored
 * because the "tools" mode reports the same calls with their ids.
 */
export function toAgentEvents(part: [string, unknown], state: MappingState, now: number): AgentEvent[] {
  const [mode, chunk] = part;
  if (mode === 'messages' && Array.isArray(chunk)) {
    const [message, meta] = chunk as [unknown, Obj | undefined];
    if (!isObj(message) || meta?.langgraph_node !== 'model_request') return [];
    const type = messageType(message);
    if (type !== 'ai' && type !== 'AIMessageChunk') return [];
    const token = contentText(message.content);
    return token ? [{ type: 'token', token }] : [];
  }
  if (mode === 'tools' && isObj(chunk)) return mapTools(chunk, state, now);
  if (mode === 'updates' && isObj(chunk) && '__interrupt__' in chunk) state.interrupted = true;
  return [];
}
