/**
 * A conversation's LangGraph thread read back in a test, at its newest checkpoint, with a real
 * PostgresSaver on the test's schema. The messages are rebuilt by LangGraph (messages is a delta
 * channel: a raw checkpoint row holds only part of it), through an agent graph of the same state.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { createAgent, fakeModel } from 'langchain';
import type { TestDatabase } from './database.ts';

export interface ThreadReader {
  /** The thread's messages at its newest checkpoint. */
  messages(threadId: string): Promise<BaseMessage[]>;
  /** The words of its human messages, oldest first. */
  humans(threadId: string): Promise<string[]>;
  close(): Promise<void>;
}

export function threadReader(db: TestDatabase): ThreadReader {
  const saver = PostgresSaver.fromConnString(db.url, { schema: db.schema });
  const messages = async (threadId: string): Promise<BaseMessage[]> => {
    const reader = createAgent({ model: fakeModel(), tools: [], checkpointer: saver });
    const newest = (await db.pool.query(`SELECT max(checkpoint_id) AS id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = ''`, [threadId])).rows[0].id;
    const state = await reader.graph.getState({ configurable: { thread_id: threadId, checkpoint_id: newest } });
    return ((state.values as { messages?: BaseMessage[] }).messages ?? []) as BaseMessage[];
  };
  return {
    messages,
    humans: async (threadId) => (await messages(threadId)).filter((m) => m.getType() === 'human').map((m) => String(m.content)),
    close: () => saver.end(),
  };
}
