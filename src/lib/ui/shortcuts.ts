/**
 * The chat's keyboard shortcuts (issue 29 item 5), as one table the handler and the sheet both
 * read: Ctrl/⌘+/ the sheet, Ctrl/⌘+Shift+O new chat, Shift+Esc the composer, Ctrl/⌘+Shift+C copy
 * the last answer, Esc stop, Alt+↑/↓ conversations, Alt+Y / Alt+N on a focused card. Pure.
 * @module
 */

export type ShortcutAction = 'sheet' | 'new' | 'composer' | 'copy' | 'stop' | 'previous' | 'next' | 'confirm' | 'deny';

interface Shortcut {
  action: ShortcutAction;
  /** How the sheet says it (`Mod` is Ctrl, or ⌘ on macOS). */
  keys: string;
  what: string;
  matches: (e: KeyLike, mod: boolean) => boolean;
}

export type KeyLike = Pick<KeyboardEvent, 'key' | 'code' | 'shiftKey' | 'altKey' | 'ctrlKey' | 'metaKey'>;

export const SHORTCUTS: readonly Shortcut[] = [
  { action: 'sheet', keys: 'Mod+/', what: 'Show keyboard shortcuts', matches: (e, mod) => mod && (e.key === '/' || e.code === 'Slash') },
  { action: 'new', keys: 'Mod+Shift+O', what: 'New conversation', matches: (e, mod) => mod && e.shiftKey && e.code === 'KeyO' },
  { action: 'composer', keys: 'Shift+Esc', what: 'Focus the message box', matches: (e) => e.shiftKey && e.key === 'Escape' },
  { action: 'copy', keys: 'Mod+Shift+C', what: 'Copy the last answer', matches: (e, mod) => mod && e.shiftKey && e.code === 'KeyC' },
  { action: 'stop', keys: 'Esc', what: 'Stop the answer', matches: (e) => e.key === 'Escape' && !e.shiftKey && !e.altKey },
  { action: 'previous', keys: 'Alt+↑', what: 'Previous conversation', matches: (e) => e.altKey && e.key === 'ArrowUp' },
  { action: 'next', keys: 'Alt+↓', what: 'Next conversation', matches: (e) => e.altKey && e.key === 'ArrowDown' },
  { action: 'confirm', keys: 'Alt+Y', what: 'Confirm the focused approval', matches: (e) => e.altKey && e.code === 'KeyY' },
  { action: 'deny', keys: 'Alt+N', what: 'Deny the focused approval', matches: (e) => e.altKey && e.code === 'KeyN' },
];

/** The action a key press asks for, or null. `mac`: ⌘ is the modifier, else Ctrl. */
export function shortcutFor(e: KeyLike, mac: boolean): ShortcutAction | null {
  const mod = mac ? e.metaKey : e.ctrlKey;
  return SHORTCUTS.find((s) => s.matches(e, mod))?.action ?? null;
}

/** The conversation `step` places from `current` in `ids` (the first one when none is open), or null. */
export function neighbour(ids: string[], current: string | null, step: 1 | -1): string | null {
  const at = current ? ids.indexOf(current) : -1;
  const next = at === -1 ? (step === 1 ? 0 : -1) : at + step;
  return next >= 0 && next < ids.length ? ids[next] : null;
}
