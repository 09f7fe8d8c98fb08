/**
 * A thread's messages as AG-UI Messages, rebuilt from its ledger events (the MESSAGES_SNAPSHOT a
 * reconnecting client gets first). Pure. Ids are the live stream's (projection.ts), so the
 * snapshot replaces what the client holds instead of adding to it: nothing shows twice.
 * @module
 */
import type { Message } from '@ag-ui/core';
import type { LedgerEvent } from '../engine/index.ts';
import { asText, textMessageId, toolResultMessageId } from './projection.ts';

export const userMessageId = (runId: string): string => `${runId}:user`;

/**
 * `events`: the conversation's committed events, oldest first. `streaming`: the answer streamed
 * since its run's last commit (not in the ledger yet), added as the message it will become.
 */
export function threadMessages(events: readonly LedgerEvent[], streaming?: { runId: string; text: string }): Message[] {
  const messages: Message[] = [];
  const toolCalls = new Set<string>();
  /** The seq of each run's last event so far (a text message's id derives from it). */
  const lastSeq = new Map<string, number>();
  const addToolCall = (id: string, tool: string, input: unknown) => {
    if (toolCalls.has(id)) return;
    toolCalls.add(id);
    messages.push({ id, role: 'assistant', toolCalls: [{ id, type: 'function', function: { name: tool, arguments: JSON.stringify(input ?? {}) } }] });
  };
  for (const e of events) {
    const runId = e.payload.run_id;
    switch (e.kind) {
      case 'user.message':
        messages.push({ id: userMessageId(runId), role: 'user', content: e.payload.text });
        break;
      case 'assistant.message':
        if (e.payload.text) messages.push({ id: textMessageId(runId, lastSeq.get(runId) ?? 0), role: 'assistant', content: e.payload.text });
        break;
      case 'tool.call':
        addToolCall(e.payload.tool_call_id, e.payload.tool, e.payload.input);
        break;
      case 'approval.requested':
        if (e.payload.tool_call_id) addToolCall(e.payload.tool_call_id, e.payload.tool, e.payload.input);
        break;
      case 'tool.result': {
        const p = e.payload;
        const content = p.status === 'done' ? asText(p.output) : JSON.stringify({ error: p.error ?? '', ...(p.code ? { code: p.code } : {}) });
        messages.push({ id: toolResultMessageId(p.tool_call_id), role: 'tool', toolCallId: p.tool_call_id, content });
        break;
      }
      case 'approval.resolved':
      case 'run.finished':
        break;
    }
    lastSeq.set(runId, e.seq);
  }
  if (streaming?.text) messages.push({ id: textMessageId(streaming.runId, lastSeq.get(streaming.runId) ?? 0), role: 'assistant', content: streaming.text });
  return messages;
}
