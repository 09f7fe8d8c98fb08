/**
 * A thread's messages as AG-UI Messages, rebuilt from its ledger events (the MESSAGES_SNAPSHOT a
 * reconnecting client gets first), in the thread's order. Pure. Ids are the ones the client
 * holds: a user message keeps the id the client sent it with (user.message `client_message_id`),
 * the others are the live stream's (projection.ts). So the snapshot replaces what the client holds
 * instead of adding to it: nothing shows twice, and nothing moves.
 *
 * Why the ids matter: @ag-ui/client merges a MESSAGES_SNAPSHOT by id. It keeps its own messages
 * that the snapshot names, in ITS order (replaced by the snapshot's version), drops those the
 * snapshot does not name, and appends the snapshot's other messages at the end. A user message
 * under another id than the client's is dropped and re-added last: the thread reorders.
 * @module
 */
import type { Message } from '@ag-ui/core';
import type { LedgerEvent } from '../engine/index.ts';
import { asText, textMessageId, toolResultMessageId } from './projection.ts';

/** A user message's id when its client gave none (another transport), or gave one already in use. */
export const userMessageId = (runId: string): string => `${runId}:user`;

/**
 * `events`: the conversation's committed events, oldest first. `streaming`: the answer streamed
 * since its run's last commit (not in the ledger yet), added as the message it will become.
 */
export function threadMessages(events: readonly LedgerEvent[], streaming?: { runId: string; text: string }): Message[] {
  const messages: Message[] = [];
  /** User messages whose client named them: the id they get if no other message has it. */
  const clientIds = new Map<Message, string>();
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
      case 'user.message': {
        const message: Message = { id: userMessageId(runId), role: 'user', content: e.payload.text };
        if (e.payload.client_message_id) clientIds.set(message, e.payload.client_message_id);
        messages.push(message);
        break;
      }
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
  // Ids stay unique (the client's merge is by id): a client id that another message has, or an
  // earlier user message took (a client that reuses ids), keeps the server's id instead.
  const taken = new Set(messages.filter((m) => !clientIds.has(m)).map((m) => m.id));
  for (const [message, id] of clientIds) {
    if (taken.has(id)) continue;
    taken.add(id);
    message.id = id;
  }
  return messages;
}
