/**
 * The in-memory bus for one process: the mirror, applied at once. The default (no round trip per
 * frame); several replicas need the PostgreSQL bus.
 * @module
 */
import { CallRecords } from './call-records.ts';
import { BusMirror } from './mirror.ts';
import type { LocalCancel, SessionBus } from './types.ts';

export function createMemorySessionBus(): SessionBus {
  const mirror = new BusMirror();
  const calls = new CallRecords();
  const mailboxes = new Map<string, { owner: string | null; deliver: (payload: string) => void }>();
  let tokens = 0;
  return {
    async addEvent(s, e) {
      mirror.apply({ o: 'e', s, e });
    },
    publish(s, message) {
      mirror.apply({ o: 'm', s, e: message.eventId, f: message.frame, t: message.terminal ? 1 : 0 });
    },
    async attach(sessionHash, sink, onReplaced) {
      const token = String(++tokens);
      if (!mirror.attachHere(sessionHash, token, sink, onReplaced)) return null;
      return { detach: () => mirror.detachHere(sessionHash, token) };
    },
    pending: (s) => mirror.pending(s),
    attached: (s) => mirror.attached(s),
    forget: (s) => mirror.apply({ o: 'x', s }),
    size: () => mirror.size,
    // One process: an event the queue does not know runs nowhere.
    cancelRemote: async () => 'unknown',
    onCancel(_handler: LocalCancel) {},
    // One process: the queue that forgets a session has already stopped its events.
    onForgotten() {},
    putCall: async (eventId, call, ttlMs) => calls.put(eventId, call, ttlMs),
    takeCall: async (eventId, apiName, owner) => calls.take(eventId, apiName, owner),
    async openMailbox(key, owner, deliver) {
      const box = { owner, deliver };
      mailboxes.set(key, box);
      return { close: async () => void (mailboxes.get(key) === box && mailboxes.delete(key)) };
    },
    async postMailbox(key, owner, payload) {
      const box = mailboxes.get(key);
      if (!box) return 'unknown';
      if (box.owner !== owner) return 'refused';
      box.deliver(payload);
      return 'sent';
    },
    flush: async () => {},
    close: async () => {},
  };
}
