/**
 * The theme the user chose (issue 29 item 6): System follows the operating system, Light and Dark
 * hold; remembered in this browser. The choice is `data-theme` on <html>; app.css does the rest.
 * @module
 */

export type Theme = 'system' | 'light' | 'dark';
export const THEMES: readonly Theme[] = ['system', 'light', 'dark'];
const KEY = 'airlock.theme';

/** The stored choice; System when none (or unreadable). */
export function storedTheme(storage: Pick<Storage, 'getItem'> = localStorage): Theme {
  const value = storage.getItem(KEY);
  return (THEMES as readonly string[]).includes(value ?? '') ? (value as Theme) : 'system';
}

/** Applies and remembers a choice. */
export function applyTheme(theme: Theme, storage: Pick<Storage, 'setItem'> = localStorage): void {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  storage.setItem(KEY, theme);
}
