/** Props shapes shared by components and the routes that feed them. */

/** A file being attached in the composer. */
export interface Upload {
  id: string;
  name: string;
  status: 'uploading' | 'ready' | 'error';
  error?: string;
}

/** A toast with an optional action (Undo). */
export interface Toast {
  id: number;
  message: string;
  action?: { label: string; run: () => void };
}
