/**
 * An MCP tool result -> what the tool card shows and what the model reads. Pure.
 * - card: `structuredContent` when the server sent it, else the text (parsed when it is JSON),
 *   with non-text blocks named (image, audio, resource links) rather than dumped as base64.
 * - model: the same as text, cut past `maxChars` with a note saying so, never silently.
 * - the card is cut too, but only past `cardMaxChars(maxChars)`: it is streamed and stored in the
 *   transcript, so a 50 MB file must not travel whole.
 * @module
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

export interface RenderedResult {
  /** What the tool card shows (JSON or text). */
  output: unknown;
  /** What the model reads. */
  modelText: string;
  /** True when modelText was cut. */
  truncated: boolean;
  isError: boolean;
}

/** The text of one content block; binary blocks become a short placeholder. */
export function blockText(block: unknown): string {
  if (!isObj(block)) return '';
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'image':
    case 'audio':
      return `[${block.type}: ${typeof block.mimeType === 'string' ? block.mimeType : 'binary'}]`;
    case 'resource_link':
      return `[resource: ${String(block.uri ?? '')}${block.name ? ` (${String(block.name)})` : ''}]`;
    case 'resource': {
      const r = isObj(block.resource) ? block.resource : {};
      return typeof r.text === 'string' ? r.text : `[resource: ${String(r.uri ?? '')}]`;
    }
    default:
      return '';
  }
}

function parseJson(text: string): unknown {
  const t = text.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return text;
  try {
    return JSON.parse(t);
  } catch {
    return text;
  }
}

/** Cuts text for the model past `maxChars`, with a note naming both lengths. */
export function cutForModel(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  return {
    text: `${text.slice(0, maxChars)}\n[Result cut: ${text.length} characters, only the first ${maxChars} are shown.]`,
    truncated: true,
  };
}

/** The card's limit: ten times the model's, at least 100 000 characters. */
export function cardMaxChars(maxChars: number): number {
  return Math.max(maxChars * 10, 100_000);
}

/** Renders a `tools/call` result for the card and the model. */
export function renderMcpResult(result: McpCallResult, maxChars: number): RenderedResult {
  const text = (result.content ?? []).map(blockText).filter(Boolean).join('\n');
  const structured = result.structuredContent;
  const full = structured !== undefined ? JSON.stringify(structured) : text;
  const cardMax = cardMaxChars(maxChars);
  const output = full.length > cardMax ? cutForModel(full, cardMax).text : structured !== undefined ? structured : parseJson(text);
  const cut = cutForModel(full || '(no content)', maxChars);
  return { output, modelText: cut.text, truncated: cut.truncated, isError: result.isError === true };
}
