/**
 * The Gradio session's record (chat-handler.ts, issue 38): bookkeeping that must not sit between a
 * submit and its first token. It starts once the first message went out, and it is done before the
 * call's last message, so a call the client sends after this one ended still continues this
 * conversation (issue 24 item 2).
 */
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../../../server/chat/chat-handler.ts';
import type { ChatIdentity } from '../../../../server/chat/identity.ts';
import type { SessionConversations } from '../../../../server/chat/session-continuity.ts';
import type { Engine, LiveEvent } from '../../../../server/engine/index.ts';
import type { EndpointRequest } from '../../../../server/gradio/index.ts';

const CONVERSATION = '6f1f2d0a-3c1e-4b7a-9a53-1d2e3f4a5b6c';
const RUN = '0b6f2c1e-8a6e-4f4e-9d1c-2a3b4c5d6e7f';
const partial = (token: string): LiveEvent => ({ kind: 'partial', payload: { run_id: RUN, token } });
const finished = { kind: 'run.finished', seq: 3, conversation_id: CONVERSATION, run_id: RUN, created_at: '2026-12-07T10:00:00.000Z', payload: { run_id: RUN, status: 'done', stop_reason: 'end_turn', duration_ms: 5, turns: 1 } } as unknown as LiveEvent;

const engine = {
  async submit() {
    return {
      runId: RUN, conversationId: CONVERSATION, replayed: false,
      events: async function* () {
        yield partial('Hello');
        yield partial(' there');
        yield finished;
      },
      cancel() {},
      finished: async () => {},
    };
  },
} as unknown as Engine;

const request = {
  data: [{ text: 'hi', files: [] }, '', null, null, null, null, null],
  eventData: null, identity: { userId: 'u1', username: 'ops', role: 'admin', token: 't' } as ChatIdentity, headers: {},
  signal: new AbortController().signal, cancelSignal: new AbortController().signal, sessionHash: 's1', eventId: 'e1',
  log() {}, progress() {},
} as EndpointRequest<ChatIdentity>;

describe("/chat's Gradio session record", () => {
  it('is written after the first token went out and before the last message', async () => {
    const log: string[] = [];
    let done!: () => void;
    const sessions: SessionConversations = {
      last: async () => (log.push('last'), null),
      remember: (_user, _session, conversationId) => {
        log.push(`remember ${conversationId}`);
        return new Promise<void>((resolve) => (done = () => (log.push('remembered'), resolve())));
      },
    };
    const handler = createChatHandler({ engine, sessions });
    const calls = handler(request)[Symbol.asyncIterator]();
    const first = await calls.next();
    expect(first.value[0].metadata.type).toBe('stream_token');
    expect(log).toEqual(['last']); // nothing written before the first token
    const pending = (async () => {
      const out: string[] = [];
      for (let next = await calls.next(); !next.done; next = await calls.next()) out.push(next.value[0].metadata.type), log.push(`message ${next.value[0].metadata.type}`);
      return out;
    })();
    await new Promise((r) => setTimeout(r, 20));
    expect(log).toEqual(['last', `remember ${CONVERSATION}`, 'message stream_token']); // the last message waits for the record
    done();
    await pending;
    expect(log.slice(-2)).toEqual(['remembered', expect.stringMatching(/^message /)]);
  });
});
