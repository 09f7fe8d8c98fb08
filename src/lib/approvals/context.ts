/**
 * The approvals inbox in the app shell's context (the layout makes it, the /approvals page reads it).
 * @module
 */
import { getContext, setContext } from 'svelte';
import type { ApprovalInbox } from './inbox.svelte.ts';

const KEY = Symbol('airlock.approvals');

export function setInboxContext(inbox: ApprovalInbox): ApprovalInbox {
  return setContext(KEY, inbox);
}

export function getInboxContext(): ApprovalInbox {
  const inbox = getContext<ApprovalInbox | undefined>(KEY);
  if (!inbox) throw new Error('getInboxContext() outside the app layout');
  return inbox;
}
