import { describe, expect, it } from 'vitest';
import { keptBeforeFork, switchesByItem, withStoredRefs } from '../../../../../src/lib/chat/branch-view.ts';
import { applyChatEvent, initialView } from '../../../../../src/lib/chat/reducer.ts';
import type { ChatItem } from '../../../../../src/lib/chat/types.ts';

const user = (id: string, text: string, seq?: number): ChatItem => ({ kind: 'user', id, text, files: [], ...(seq ? { messageId: id, seq } : {}) });
const answer = (id: string, text: string, seq?: number): ChatItem => ({ kind: 'answer', id, text, streaming: false, ...(seq ? { messageId: id, seq } : {}) });
const card = (id: string, seq?: number): ChatItem => ({ kind: 'approval', id, tool: 'deploy_service', input: {}, prompt: '', expiresAt: null, timeoutS: null, status: 'confirmed', ...(seq ? { messageId: `m-${id}`, seq } : {}) });

describe('branches in the chat pane (issue 29)', () => {
  const shown = [user('u1', 'deploy', 1), card('ap', 2), answer('a1', 'Deployed.', 3), user('u2', 'hello', 4), answer('a2', 'Hi', 5)];

  it('puts each switch on the first item at or after its fork position', () => {
    const at = switchesByItem(shown, [{ from: 2, branches: [0, 1], index: 1 }, { from: 4, branches: [0, 2], index: 0 }]);
    expect([...at].map(([id, s]) => [id, s.index])).toEqual([['ap', 1], ['u2', 0]]);
    expect(switchesByItem([user('live', 'x')], [{ from: 1, branches: [0, 1], index: 0 }]).size).toBe(0);
  });

  it('an edit keeps what came before the message, a regenerate what came up to the message it answers', () => {
    expect(keptBeforeFork(shown, 'u2', 'edit').map((i) => i.id)).toEqual(['u1', 'ap', 'a1']);
    expect(keptBeforeFork(shown, 'a1', 'regenerate').map((i) => i.id)).toEqual(['u1']);
  });

  it('the reducer streams a fork after what it keeps: an edit shows its new text, a regenerate no new message', () => {
    const view = { ...initialView(), items: shown };
    const edited = applyChatEvent(view, { type: 'forked', at: 'u2', action: 'edit', text: 'health?' });
    expect(edited.items.map((i) => (i.kind === 'user' ? i.text : i.id))).toEqual(['deploy', 'ap', 'a1', 'health?']);
    expect(edited.phase).toBe('streaming');
    const again = applyChatEvent(view, { type: 'forked', at: 'a2', action: 'regenerate', text: '' });
    expect(again.items.map((i) => i.id)).toEqual(['u1', 'ap', 'a1', 'u2']);
  });

  it('live items learn their stored ids, keeping their own item ids', () => {
    const live = [user('u1', 'deploy', 1), user('user-2', 'hello'), { kind: 'tool', id: 'call-1', tool: 't', input: {}, status: 'done' } as ChatItem, answer('answer-2-3', 'Hi')];
    const stored = [user('u1', 'deploy', 1), user('m2', 'hello', 4), { kind: 'tool', id: 'm3', callId: 'call-1', tool: 't', input: {}, status: 'done', messageId: 'm3', seq: 5 } as ChatItem, answer('m4', 'Hi', 6)];
    const learned = applyChatEvent({ ...initialView(), items: live }, { type: 'stored', items: stored }).items;
    expect(learned.map((i) => [i.id, i.messageId, i.seq])).toEqual([['u1', 'u1', 1], ['user-2', 'm2', 4], ['call-1', 'm3', 5], ['answer-2-3', 'm4', 6]]);
  });

  it('learns nothing for a message whose stored text differs (a stopped answer, say)', () => {
    const learned = withStoredRefs([user('user-1', 'hello'), answer('answer-1', 'Hel')], [user('m1', 'hello', 1), answer('m2', 'Hello', 2)]);
    expect(learned.map((i) => i.messageId)).toEqual(['m1', undefined]);
  });
});
