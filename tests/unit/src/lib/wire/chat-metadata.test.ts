/**
 * The /chat metadata schema against what the server really emits: the gateway's own pipeline
 * (handler, Gradio view, error guard) over a fake engine playing a ledger run with every kind, and
 * its failure paths. Every message must parse with the strict schema, so a field the server emits
 * without declaring it in src/lib/wire fails here, and every kind of the union must be seen.
 */
import { describe, expect, it } from 'vitest';
import type { FastifyBaseLogger } from 'fastify';
import { guardChatErrors } from '../../../../../server/chat/chat-error.ts';
import { createChatHandler } from '../../../../../server/chat/chat-handler.ts';
import { forGradioClients } from '../../../../../server/chat/gradio-view.ts';
import type { ChatIdentity } from '../../../../../server/chat/identity.ts';
import type { Engine, LiveEvent } from '../../../../../server/engine/index.ts';
import { AirlockError } from '../../../../../server/errors.ts';
import { errorFieldsOf } from '../../../../../src/lib/wire/index.ts';
import type { EndpointRequest } from '../../../../../server/gradio/index.ts';
import { ChatMetadataSchema, WireMessageSchema, WireMetadataSchema } from '../../../../../src/lib/wire/chat-metadata.ts';
import { CONVERSATION, LEDGER_RUN } from './ledger-fixture.ts';

const quiet = { error() {}, warn() {} } as unknown as FastifyBaseLogger;

/** The engine's side of one submit: a run that plays `events` (queued behind another first, if given), or a submit that throws. */
function engineOf(outcome: LiveEvent[] | Error, queued?: { position: number; requestId: string }): Engine {
  return {
    async submit() {
      if (outcome instanceof Error) throw outcome;
      return {
        runId: 'r', conversationId: CONVERSATION, replayed: false, queued,
        events: async function* () {
          yield* outcome;
        },
        cancel() {},
        finished: async () => {},
      };
    },
  } as unknown as Engine;
}

/** Every message /chat yields for one call, through the pipeline the gateway mounts (gateway.ts). */
async function emitted(engine: Engine): Promise<unknown[]> {
  const handler = guardChatErrors(forGradioClients(createChatHandler({ engine })), quiet);
  const request = {
    data: [{ text: 'Deploy checkout-api', files: [] }, 'new', null, null, null, null, null],
    eventData: null, identity: { userId: 'u1', username: 'ops', role: 'admin', token: 't' } as ChatIdentity, headers: {},
    signal: new AbortController().signal, cancelSignal: new AbortController().signal, sessionHash: 's1', eventId: 'e1',
    log() {}, progress() {},
  } as EndpointRequest<ChatIdentity>;
  const out: unknown[] = [];
  try {
    for await (const [message] of handler(request) as AsyncIterable<unknown[]>) out.push(message);
  } catch {
    // A failed turn ends with an error completion after its error message: the messages are what counts.
  }
  return out;
}

describe('the /chat metadata schema (src/lib/wire/chat-metadata.ts)', () => {
  it('parses every message the server emits, of every kind', async () => {
    const messages = [
      ...(await emitted(engineOf(LEDGER_RUN))),
      // Sent while another answer runs: queued first, then its own turn (issue 24).
      ...(await emitted(engineOf(LEDGER_RUN, { position: 1, requestId: 'q1' }))),
      // A submit refused before its run (the conversation is busy) and a run whose end could not commit.
      ...(await emitted(engineOf(new AirlockError('CONVERSATION_BUSY')))),
      ...(await emitted(engineOf(Object.assign([], { [Symbol.iterator]: () => { throw new AirlockError('SERVICE_UNAVAILABLE'); } })))),
    ];
    const types = new Set<string>();
    for (const message of messages) {
      const parsed = WireMessageSchema.safeParse(message);
      expect(parsed.error?.issues, JSON.stringify(message)).toBeUndefined();
      types.add(parsed.data!.metadata.type);
    }
    expect([...types].sort()).toEqual(WireMetadataSchema.options.map((o) => o.shape.type.value).sort());
  });

  it('refuses what the server does not emit: an undeclared field, a code outside the taxonomy, no conversation', () => {
    const token = { type: 'stream_token', token: 'a', conversation_id: CONVERSATION };
    expect(WireMetadataSchema.safeParse(token).success).toBe(true);
    expect(WireMetadataSchema.safeParse({ ...token, extra: 1 }).success).toBe(false);
    expect(WireMetadataSchema.safeParse({ type: 'error', code: 'WHAT', detail: '', retryable: false, conversation_id: CONVERSATION }).success).toBe(false);
    expect(WireMetadataSchema.safeParse({ type: 'stream_token', token: 'a' }).success).toBe(false);
    // The projection's own metadata has no conversation, and no Gradio keys on a tool step.
    expect(ChatMetadataSchema.safeParse({ type: 'stream_token', token: 'a' }).success).toBe(true);
    expect(ChatMetadataSchema.safeParse({ type: 'tool_end', tool: 'x', output: 1, tool_call_id: 't', duration_ms: 1, title: 'x' }).success).toBe(false);
  });
});

describe('errorFieldsOf: the fields an error is about', () => {
  it('keeps well-formed {path, message} entries, with just those keys; anything else is none', () => {
    expect(errorFieldsOf([{ path: 'version', message: 'too small', extra: 1 }, { path: 3, message: 'x' }, null, { path: '' , message: 'unknown argument colour' }])).toEqual([
      { path: 'version', message: 'too small' },
      { path: '', message: 'unknown argument colour' },
    ]);
    expect(errorFieldsOf(undefined)).toEqual([]);
    expect(errorFieldsOf({ path: 'a', message: 'b' })).toEqual([]);
  });
});
