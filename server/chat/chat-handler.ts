/**
 * The /chat handler: a thin Gradio adapter over the engine.
 *
 *   normalize the Gradio call -> engine.submit (a new run, or the run of the same request_id)
 *     -> follow the run from its start -> ChatMessages (chat-projection.ts)
 *
 * The run belongs to the engine, not to this connection: a client that goes away only stops
 * following it; /cancel (Stop) and shutdown fire `cancelSignal`, which cancels the run. So that
 * Stop still reaches a run whose client left (issue 30 item 6), the handler, and with it the
 * Gradio event and its id, lasts until the run ends: a /cancel naming the event then stops it.
 * @module
 */
import { errorFields, type DecisionOrigin, type Engine } from '../engine/index.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import type { EndpointRequest } from '../gradio/index.ts';
import { chatMessage, type ChatMessage, type ChatMetadata } from '../../src/lib/wire/index.ts';
import { ChatProjection } from './chat-projection.ts';
import type { ChatIdentity } from './identity.ts';
import { asksNewConversation, ChatInputError, normalizeChatInput } from './input.ts';
import type { FileUrlResolver } from './file-urls.ts';
import { currentTimings } from '../timing/index.ts';
import type { SessionConversations } from './session-continuity.ts';

type Output = [ChatMessage];

/** A decision through the MCP tool `chat` (the Gradio MCP server's one tool). */
const MCP_ORIGIN: DecisionOrigin = { method: 'POST', path: '/gradio_api/mcp/', channel: 'mcp' };

/**
 * Events whose messages may be a turn's last, so they are held until the next event to carry the
 * timings: the cards that commit with a paused run.finished (approval cards, M-of-N progress), and
 * a decision (a turn that only decides, its batch still waiting, ends on its confirm_resolved).
 */
const HELD_UNTIL_NEXT = new Set(['approval.requested', 'approval.approved', 'approval.resolved']);

/** The message with the request's timings so far (server/timing), when it is metered. */
function withTimings([message]: Output): Output {
  const timings = currentTimings();
  return timings ? [{ ...message, metadata: { ...message.metadata, timings } }] : [message];
}

/** An error as /chat says it; a VALIDATION_ERROR about arguments names them (`fields`, an edited confirm's). */
function errorMetadata(error: AirlockError): ChatMetadata {
  const fields = errorFields(error);
  return { type: 'error', code: error.code, detail: error.message, retryable: error.retryable, ...(fields.length ? { fields } : {}) };
}

/**
 * `sessions`: Gradio session continuity (session-continuity.ts). A call naming no conversation
 * continues the one the caller's Gradio session used last; every turn records its conversation as
 * the session's last. Without it, such a call starts a new conversation.
 * `fileUrls`: what a file given by URL becomes (file-urls.ts); without it, such a file is unknown.
 */
export function createChatHandler({ engine, sessions, fileUrls }: { engine: Engine; sessions?: SessionConversations; fileUrls?: FileUrlResolver }) {
  return async function* handleChat(request: EndpointRequest<ChatIdentity>): AsyncGenerator<Output> {
    const fail = (error: AirlockError, conversationId = ''): Output => [
      chatMessage(conversationId, '', errorMetadata(error)),
    ];
    let run;
    let remember = (): Promise<void> | undefined => undefined;
    let remembered: Promise<void> | undefined;
    try {
      const input = normalizeChatInput(request.data, request.eventData);
      const { userId } = request.identity;
      // The MCP tool `chat` is its own channel (issue 26): its decisions are recorded as `mcp`.
      if (request.via === 'mcp') input.origin = MCP_ORIGIN;
      if (fileUrls) input.files = await fileUrls(input.files, userId);
      const session = request.clientSessionHash ?? request.sessionHash;
      if (sessions && !input.conversationId && !asksNewConversation(request.data, request.eventData)) {
        input.conversationId = await sessions.last(userId, session, input.requestId);
      }
      // Sent while the agent runs: queued behind it (issue 24), the call stays open for its turn.
      run = await engine.submit(input, { userId, token: request.identity.token }, { queue: true });
      // Bookkeeping, after the first message (issue 38: not before the first token). Best effort:
      // the turn runs either way; a session that could not be recorded starts anew.
      const conversationId = run.conversationId;
      if (sessions) remember = () => (remembered ??= sessions.remember(userId, session, conversationId).catch(() => {}));
    } catch (error) {
      if (error instanceof ChatInputError) error = new AirlockError('VALIDATION_ERROR', error.message);
      if (!isAirlockError(error)) throw error;
      yield fail(error);
      return;
    }

    const cancel = () => run.cancel();
    request.cancelSignal.addEventListener('abort', cancel, { once: true });
    const view = new ChatProjection();
    const emit = (metadata: ChatMetadata): Output => [chatMessage(run.conversationId, view.content, metadata)];
    // The session's record starts once the first message is out and is done before the last one,
    // so a call the client sends after this one ends continues this conversation, as before.
    const ending = async (output: Output): Promise<Output> => (await remember(), output);
    // The turn's last message carries its timings (issue 28 item 6). A pause's cards commit with
    // its run.finished, so they are held until the next event (at once) to know which is last.
    let held: ChatMetadata[] = [];
    try {
      // Queued behind the running answer (issue 24): said first; its own turn streams when it starts.
      if (run.queued) yield emit({ type: 'queued', position: run.queued.position, request_id: run.queued.requestId });
      for await (const event of run.events()) {
        // Past the first message (the code after a yield runs once the client took it).
        if (view.content || run.queued) remember();
        const shown = view.apply(event, run.conversationId);
        if (event.kind === 'run.finished') {
          const last = [...held, ...shown];
          held = [];
          const final = last.pop() ?? { type: 'stream_token', token: '' };
          for (const metadata of last) yield emit(metadata);
          yield withTimings(await ending(emit(final)));
          continue;
        }
        for (const metadata of held) yield emit(metadata);
        held = [];
        if (HELD_UNTIL_NEXT.has(event.kind)) held = shown;
        else for (const metadata of shown) yield emit(metadata);
      }
      for (const metadata of held) yield emit(metadata);
    } catch (error) {
      for (const metadata of held) yield emit(metadata);
      // The run could not commit its end (the database went away): say so, with the answer so far.
      if (!isAirlockError(error)) throw error;
      yield withTimings(await ending(emit(errorMetadata(error))));
    } finally {
      await remember();
      // The client left mid-run (the queue stopped pulling): stay cancellable until the run ends.
      if (request.signal.aborted && !request.cancelSignal.aborted) await run.finished();
      request.cancelSignal.removeEventListener('abort', cancel);
    }
  };
}
