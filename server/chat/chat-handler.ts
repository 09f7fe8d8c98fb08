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
import type { Engine } from '../engine/index.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import type { EndpointRequest } from '../gradio/index.ts';
import { chatMessage, type ChatMessage, type ChatMetadata } from './chat-message.ts';
import { ChatProjection } from './chat-projection.ts';
import type { ChatIdentity } from './identity.ts';
import { asksNewConversation, ChatInputError, normalizeChatInput } from './input.ts';
import type { SessionConversations } from './session-continuity.ts';

type Output = [ChatMessage];

/**
 * `sessions`: Gradio session continuity (session-continuity.ts). A call naming no conversation
 * continues the one the caller's Gradio session used last; every turn records its conversation as
 * the session's last. Without it, such a call starts a new conversation.
 */
export function createChatHandler({ engine, sessions }: { engine: Engine; sessions?: SessionConversations }) {
  return async function* handleChat(request: EndpointRequest<ChatIdentity>): AsyncGenerator<Output> {
    const fail = (error: AirlockError, conversationId = ''): Output => [
      chatMessage(conversationId, '', { type: 'error', code: error.code, detail: error.message, retryable: error.retryable }),
    ];
    let run;
    try {
      const input = normalizeChatInput(request.data, request.eventData);
      const { userId } = request.identity;
      const session = request.clientSessionHash ?? request.sessionHash;
      if (sessions && !input.conversationId && !asksNewConversation(request.data, request.eventData)) {
        input.conversationId = await sessions.last(userId, session, input.requestId);
      }
      run = await engine.submit(input, { userId, token: request.identity.token });
      // Best effort: the turn runs either way; a session that could not be recorded starts anew.
      if (sessions) await sessions.remember(userId, session, run.conversationId).catch(() => {});
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
    try {
      for await (const event of run.events()) {
        for (const metadata of view.apply(event, run.conversationId)) yield emit(metadata);
      }
    } catch (error) {
      // The run could not commit its end (the database went away): say so, with the answer so far.
      if (!isAirlockError(error)) throw error;
      yield emit({ type: 'error', code: error.code, detail: error.message, retryable: error.retryable });
    } finally {
      // The client left mid-run (the queue stopped pulling): stay cancellable until the run ends.
      if (request.signal.aborted && !request.cancelSignal.aborted) await run.finished();
      request.cancelSignal.removeEventListener('abort', cancel);
    }
  };
}
