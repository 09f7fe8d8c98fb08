/**
 * /chat as Gradio clients read it, on top of our own ChatMessages (whose `metadata.type` keys stay
 * as they are for our UI): Gradio's MetadataDict keys so a `gr.Chatbot` shows tool steps as
 * "thoughts" (`title`, `status` pending|done, `id`, `duration` in seconds, `log`), a paused run's
 * `content` that says what to do for someone who only prints it, and `log` messages (a toast in
 * Gradio UIs) when a tool starts and when an approval waits. Pure but for the wrapper.
 * @module
 */
import type { EndpointDefinition, EndpointRequest } from '../gradio/index.ts';
import type { ChatMessage } from '../../src/lib/wire/index.ts';

/** Longest `log` text a thought carries (tool inputs can be large). */
const LOG_MAX = 200;

function brief(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  return text.length > LOG_MAX ? `${text.slice(0, LOG_MAX - 1)}…` : text;
}

/** The Gradio MetadataDict keys a message gets (none for plain answer tokens and errors). */
export function gradioMetadata(m: ChatMessage['metadata']): Record<string, unknown> {
  switch (m.type) {
    case 'tool_start':
      // A call the tool policy lets through with caution says so in its title.
      return { title: `🛠️ ${m.tool}${m.policy?.action === 'caution' ? ' (caution)' : ''}`, status: 'pending', id: m.tool_call_id, log: brief(m.input) };
    case 'tool_end':
      return { title: `🛠️ ${m.tool}`, status: 'done', id: m.tool_call_id, duration: m.duration_ms / 1000, log: brief(m.output) };
    case 'tool_error':
      return { title: `🛠️ ${m.tool} failed`, status: 'done', id: m.tool_call_id, log: brief(m.error) };
    default:
      return {};
  }
}

/** The plain-text note of one approval: what waits and how to decide it. */
export function approvalNote(m: Extract<ChatMessage['metadata'], { type: 'confirm_required' }>): string {
  return (
    `Approval needed: ${m.prompt} (tool ${m.tool}). To go ahead, call /chat again with action "confirm" ` +
    `(or "deny" to refuse), conversation_id "${m.conversation_id}" and approval_id "${m.approval_id}", before ${m.expires_at}.`
  );
}

/**
 * What a paused run says in `content`: the answer so far, then the notes of every approval the run
 * opened so far (`earlier`: those before this message; a batch may pause for several).
 */
export function pausedContent(message: ChatMessage, earlier: readonly string[] = []): string {
  const m = message.metadata;
  if (m.type !== 'confirm_required') return message.content;
  const notes = [...earlier, approvalNote(m)].join('\n');
  return message.content ? `${message.content}\n\n${notes}` : notes;
}

/** One ChatMessage as Gradio clients get it. Gradio's keys are added beside ours (none collide). */
export function gradioChatMessage(message: ChatMessage, earlierNotes: readonly string[] = []): ChatMessage {
  const extra = gradioMetadata(message.metadata);
  const content = pausedContent(message, earlierNotes);
  if (Object.keys(extra).length === 0 && content === message.content) return message;
  return { ...message, content, metadata: { ...message.metadata, ...extra } as ChatMessage['metadata'] };
}

type Handler<I> = EndpointDefinition<I>['handler'];

/** Wraps the /chat handler: Gradio metadata on every message, `log` when a tool starts or an approval waits. */
export function forGradioClients<I>(handler: Handler<I>): Handler<I> {
  return async function* gradioView(request: EndpointRequest<I>) {
    const notes: string[] = [];
    for await (const [message] of handler(request) as AsyncIterable<[ChatMessage]>) {
      const m = message.metadata;
      if (m.type === 'tool_start') request.log('info', `Running ${m.tool}…`, { title: 'Tool started' });
      if (m.type === 'confirm_required') request.log('warning', `Approval needed: ${m.prompt}`, { title: 'Approval needed', duration: null });
      yield [gradioChatMessage(message, notes)];
      if (m.type === 'confirm_required') notes.push(approvalNote(m));
    }
  };
}
