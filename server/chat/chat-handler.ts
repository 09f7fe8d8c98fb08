/**
 * The /chat handler: one turn of the conversation, streamed as ChatMessages.
 *
 *   validate -> conversation (create on first message) -> lease (CONVERSATION_BUSY)
 *     -> action? resolve the one approval it names atomically -> confirm_resolved
 *          -> the whole paused batch decided? agent.resume : stay paused
 *     -> else: supersede pending approvals -> user message -> (resume confirmed actions) -> agent.run
 *   -> stream tokens and tool cards (persisted as they happen)
 *   -> on approval_required: approval rows + confirm_required, the stream ends (checkpoint in PG)
 * @module
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AgentEvent, AgentRuntime } from '../agent/index.ts';
import { createConversation, getConversationForUser } from '../db/conversations.ts';
import type { Pool } from '../db/index.ts';
import { AirlockError } from '../errors.ts';
import { lookupStoredFile, type EndpointRequest } from '../gradio/index.ts';
import { listPendingApprovals, markResumed } from '../db/approvals.ts';
import { decideApprovals, openApprovals, owedResume, type OwedResume } from './approvals.ts';
import { logChatError, toChatError } from './chat-error.ts';
import { agentEventMetadata, chatMessage, type ChatMessage, type ChatMetadata } from './chat-message.ts';
import { chatOwnerKey, type ChatIdentity } from './identity.ts';
import { ChatInputError, normalizeChatInput, type ChatInput } from './input.ts';
import { ConversationLease } from './lease.ts';
import { withReports, type PrepareChatAttachments } from './attachments.ts';
import type { PendingWrites } from './pending-writes.ts';
import { Transcript } from './transcript.ts';

export interface ChatHandlerDeps {
  pool: Pool;
  agent: AgentRuntime;
  approvalTimeoutS: number;
  leaseTtlS: number;
  /** Where the Gradio server stores uploads; attached files must be among them. */
  uploadDir: string;
  /** Reads and frames a message's files for the model (default: none are read). */
  prepareAttachments?: PrepareChatAttachments;
  log: FastifyBaseLogger;
  now?: () => Date;
  /** Keeps answer writes that failed while the database was away, and writes them when it is back. */
  pendingWrites?: PendingWrites;
}

type Output = [ChatMessage];

export function createChatHandler(deps: ChatHandlerDeps) {
  const now = deps.now ?? (() => new Date());

  /** Resumes the paused batch with its decisions; they count as consumed once the graph is past the pause. */
  async function* resumeOwed(owed: OwedResume, context: { threadId: string; userToken: string; conversationId: string; signal: AbortSignal }) {
    for await (const event of deps.agent.resume({ ...context, decisions: owed.decisions })) {
      if (event.type === 'approval_required' || event.type === 'done') await markResumed(deps.pool, owed.approvalIds, now());
      yield event;
    }
  }

  return async function* handleChat(request: EndpointRequest<ChatIdentity>): AsyncGenerator<Output> {
    const user = request.identity;
    let conversationId = '';
    let content = '';
    const emit = (metadata: ChatMetadata): Output => [chatMessage(conversationId, content, metadata)];
    const fail = (error: AirlockError): Output =>
      emit({ type: 'error', code: error.code, detail: error.message, retryable: error.retryable });

    let input: ChatInput;
    try {
      input = normalizeChatInput(request.data, request.eventData);
    } catch (error) {
      if (!(error instanceof ChatInputError)) throw error;
      yield fail(new AirlockError('VALIDATION_ERROR', error.message));
      return;
    }
    // Only the caller's own uploads resolve: another user's path is as unknown as a made-up one.
    const found = await Promise.all(input.files.map((f) => lookupStoredFile(deps.uploadDir, f.path, chatOwnerKey(user))));
    const foreign = input.files.find((_, i) => !found[i]);
    if (foreign) {
      yield fail(new AirlockError('VALIDATION_ERROR', `The file ${foreign.orig_name ?? foreign.path} was not uploaded here; upload it first.`));
      return;
    }
    if (!input.action && !input.text && input.files.length === 0) {
      yield fail(new AirlockError('VALIDATION_ERROR', 'The message is empty.'));
      return;
    }

    if (input.conversationId) {
      const conversation = await getConversationForUser(deps.pool, { userId: user.userId, id: input.conversationId });
      if (!conversation) {
        yield fail(input.action ? new AirlockError('APPROVAL_NOT_FOUND') : new AirlockError('NOT_FOUND', 'This conversation does not exist.'));
        return;
      }
      conversationId = conversation.id;
    } else if (input.action) {
      yield fail(new AirlockError('APPROVAL_NOT_FOUND'));
      return;
    } else {
      conversationId = (await createConversation(deps.pool, { userId: user.userId, text: input.text || 'Attachments' })).id;
    }

    const lease = await ConversationLease.acquire(deps.pool, conversationId, request.eventId, deps.leaseTtlS);
    if (!lease) {
      yield fail(new AirlockError('CONVERSATION_BUSY'));
      return;
    }
    const transcript = new Transcript(deps.pool, conversationId, deps.pendingWrites);
    let paused = false;
    try {
      const resolved = await decideApprovals(deps.pool, { conversationId, userId: user.userId, action: input.action, approvalId: input.approvalId, now });
      for (const r of resolved) {
        await transcript.approvalResolved(r.approvalId, r.result);
        yield emit({ type: 'confirm_resolved', result: r.result, approval_id: r.approvalId });
      }
      const owed = await owedResume(deps.pool, deps.agent, conversationId, now);

      const runContext = { threadId: conversationId, userToken: user.token, conversationId, signal: request.signal };
      let events: AsyncIterable<AgentEvent>;
      if (input.action) {
        if (!owed && resolved.length === 0) throw new AirlockError('APPROVAL_NOT_FOUND');
        if (!owed) {
          // Other approvals of the batch still wait for their own decision: the run stays paused.
          const waiting = await stillPending(deps.pool, conversationId);
          if (waiting) await lease.handOverToApproval(waiting);
          paused = true;
          return;
        }
        events = resumeOwed(owed, runContext);
      } else {
        // Before the model call and once per turn: extraction never sits on the token path.
        const attached = await (deps.prepareAttachments ?? noAttachments)(input.files, found.map((f) => f!.path));
        const files = withReports(input.files, attached.reports);
        await transcript.user(input.text, files);
        if (files.length) yield emit({ type: 'attachments', files });
        const run = () => deps.agent.run({ ...runContext, text: input.text || FILES_ONLY, attachments: attached.parts });
        // A confirmed action is done before the new message, never dropped; otherwise the agent
        // answers the superseded tool calls itself before it takes the new message.
        if (owed?.runsSomething) events = concatUnlessPaused(resumeOwed(owed, runContext), run);
        else {
          if (owed) await markResumed(deps.pool, owed.approvalIds, now());
          events = run();
        }
      }

      for await (const event of events) {
        if (event.type === 'approval_required') {
          const opened = await openApprovals(deps.pool, {
            conversationId,
            userId: user.userId,
            pending: event.approvals,
            timeoutS: deps.approvalTimeoutS,
            now,
          });
          for (const approval of opened) {
            await transcript.approvalRequested(approval);
            yield emit({
              type: 'confirm_required',
              prompt: approval.prompt,
              thread_id: conversationId,
              approval_id: approval.approvalId,
              tool: approval.tool,
              input: approval.input,
              expires_at: approval.expiresAt.toISOString(),
              timeout_s: approval.timeoutS,
            });
          }
          if (opened.length) await lease.handOverToApproval(opened[0].expiresAt);
          paused = true;
          return;
        }
        const metadata = agentEventMetadata(event);
        if (!metadata) continue;
        if (event.type === 'token') content += event.token;
        await transcript.record(event);
        yield emit(metadata);
        if (event.type === 'tool_error' && (event.code === 'FORBIDDEN' || event.code === 'UNAUTHORIZED')) {
          yield fail(new AirlockError(event.code, event.error));
        }
      }
      await transcript.endAnswer();
    } catch (error) {
      if (request.signal.aborted) {
        await transcript.endAnswer({ cancelled: true }).catch(() => {});
        throw error;
      }
      const airlockError = toChatError(error, request.eventId);
      logChatError(deps.log, airlockError, request.eventId);
      await transcript.endAnswer({ error: { code: airlockError.code, detail: airlockError.message } }).catch(() => {});
      yield fail(airlockError);
    } finally {
      if (!paused) await lease.release().catch(() => {});
    }
  };
}

/** The first stream, then the second, unless the first paused for approval (its `done` is dropped). */
async function* concatUnlessPaused(first: AsyncIterable<AgentEvent>, second: () => AsyncIterable<AgentEvent>): AsyncGenerator<AgentEvent> {
  for await (const event of first) {
    if (event.type === 'done') break;
    yield event;
    if (event.type === 'approval_required') return;
  }
  yield* second();
}

async function stillPending(pool: Pool, conversationId: string): Promise<Date | null> {
  const [first] = await listPendingApprovals(pool, conversationId);
  return first?.expiresAt ?? null;
}

/** The user's words when a message is only files (the model needs a non-empty first part). */
const FILES_ONLY = '(No message text: see the attached files.)';

const noAttachments: PrepareChatAttachments = async () => ({ parts: [], reports: [] });
