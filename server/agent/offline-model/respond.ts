/**
 * The offline model's brain: an OpenAI chat request (messages + offered tools) -> what to say or
 * which tools to call. Pure; the HTTP layer in routes.ts only frames the decision.
 * @module
 */
import { readEditNote } from '../edited-call.ts';
import { CLARIFY_MARKER, isSuperseded, renderHelp, renderQuestion, renderToolResults, renderUnavailable, type ToolResult } from './answer.ts';
import {
  ASKS_SUMMARY, ASKS_WHAT_WENT_WRONG, MENTIONS_FILE, parseAttachments, quoteErrorLines, summarizeAttachments, withoutAttachments,
  type FramedAttachment,
} from './attachments.ts';
import { apiExampleAnswer } from './api-example.ts';
import { parseExternalIntent } from './external-intents.ts';
import { KNOWN_TOOLS, parseIntent, type Intent } from './intents.ts';

/** The parts of an OpenAI chat message the offline model reads. */
export interface ChatMessageIn {
  role: string;
  content?: string | Array<{ type?: string; text?: string }> | null;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/** A tool offered in the request (`tools[].function`). */
export interface OfferedTool {
  name: string;
  parameters?: { required?: string[]; properties?: Record<string, unknown> };
}

/** Fields whose value may be any phrase, so a bare reply to our question can fill them. */
const FREE_TEXT_FIELDS = new Set(['reason', 'title', 'query']);

export type Decision = { type: 'text'; text: string } | { type: 'tool_calls'; calls: Intent[] };

/** The text of a message whatever its content shape. */
export function textOf(message: ChatMessageIn | undefined): string {
  const c = message?.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((p) => p.text ?? '').join('');
  return '';
}

/**
 * The user's own words: a message's first text part (later parts are attached files), or its
 * text without attachment frames. Requests are read from these only, never from a file.
 */
export function ownWords(message: ChatMessageIn | undefined): string {
  const c = message?.content;
  if (Array.isArray(c)) return c.find((p) => p.type === 'text' || p.type === undefined)?.text ?? '';
  return withoutAttachments(textOf(message));
}

function safeJson(s: string): Record<string, unknown> {
  try {
    const v = JSON.parse(s);
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

/** The tool messages that end right before `end`, paired with the calls of the assistant message before them. */
function resultsBefore(messages: ChatMessageIn[], end: number): ToolResult[] {
  let i = end;
  while (i > 0 && messages[i - 1].role === 'tool') i--;
  const calls = messages[i - 1]?.tool_calls ?? [];
  return messages.slice(i, end).map((m) => {
    const call = calls.find((c) => c.id === m.tool_call_id);
    // An approver's edit (issue 27): the note says which arguments really ran; the answer names those.
    const edited = readEditNote(textOf(m));
    if (edited) return { name: call?.function.name ?? 'tool', args: edited.args, content: edited.result };
    return { name: call?.function.name ?? 'tool', args: call ? safeJson(call.function.arguments) : {}, content: textOf(m) };
  });
}

/** The user's request, joined with the previous one when our last reply asked for missing details. */
function currentRequest(messages: ChatMessageIn[]): { text: string; followUp?: string } {
  const users = messages.map((m, i) => ({ m, i })).filter(({ m }) => m.role === 'user');
  const last = users.at(-1);
  if (!last) return { text: '' };
  const text = ownWords(last.m);
  const before = messages[last.i - 1];
  const previousUser = users.at(-2);
  if (before?.role === 'assistant' && !before.tool_calls?.length && textOf(before).includes(CLARIFY_MARKER) && previousUser) {
    return { text, followUp: `${ownWords(previousUser.m)} ${text}` };
  }
  return { text };
}

function splitRequests(text: string): string[] {
  return text.split(/\s*(?:;|\band also\b|\band then\b|\bthen also\b)\s*/i).filter((s) => s.trim().length > 0);
}

/**
 * One intent per request: the built-in rules, unless an offered external (MCP) tool fits better
 * (two or more of its name's words said, or no built-in tool offered for the request).
 */
function intentsOf(text: string, tools: OfferedTool[]): Intent[] {
  const external = tools.filter((t) => !KNOWN_TOOLS.has(t.name));
  const offered = new Set(tools.map((t) => t.name));
  return splitRequests(text)
    .map((t) => {
      const builtin = parseIntent(t);
      const other = external.length ? parseExternalIntent(t, external) : null;
      if (other && (other.matched >= 2 || !builtin || !offered.has(builtin.tool))) return { tool: other.tool, args: other.args };
      return builtin;
    })
    .filter((x): x is Intent => x !== null);
}

/** Attachments of the last user message, or (when the text points back at a file) of the latest one that had any. */
function attachmentsInPlay(messages: ChatMessageIn[], text: string): { files: FramedAttachment[]; current: boolean } {
  const users = messages.filter((m) => m.role === 'user');
  const current = parseAttachments(textOf(users.at(-1)));
  if (current.length || !MENTIONS_FILE.test(text)) return { files: current, current: true };
  for (const m of users.slice(0, -1).reverse()) {
    const earlier = parseAttachments(textOf(m));
    if (earlier.length) return { files: earlier, current: false };
  }
  return { files: [], current: false };
}

/** The answer about attached files, or null when the message asks for something else. */
function attachmentAnswer(messages: ChatMessageIn[], text: string, hasIntents: boolean): string | null {
  const { files, current } = attachmentsInPlay(messages, text);
  if (files.length === 0) return null;
  if (ASKS_WHAT_WENT_WRONG.test(text)) return quoteErrorLines(files);
  if (ASKS_SUMMARY.test(text) || (current && !hasIntents)) return summarizeAttachments(files);
  return null;
}

/** Decides the reply to a chat request. */
/**
 * The answer to a message that replaced a pending approval starts by saying what did not happen
 * (issue 23): the calls answered SUPERSEDED right before the latest user message.
 */
export function respond(messages: ChatMessageIn[], tools: OfferedTool[]): Decision {
  const decision = decide(messages, tools);
  if (decision.type !== 'text') return decision;
  const replaced = resultsBefore(messages, messages.findLastIndex((m) => m.role === 'user')).filter(isSuperseded);
  return replaced.length ? { type: 'text', text: `${renderToolResults(replaced)}\n\n${decision.text}` } : decision;
}

function decide(messages: ChatMessageIn[], tools: OfferedTool[]): Decision {
  if (messages.at(-1)?.role === 'tool') return { type: 'text', text: renderToolResults(resultsBefore(messages, messages.length)) };

  const request = currentRequest(messages);
  let intents = request.followUp ? intentsOf(request.followUp, tools) : [];
  const answersQuestion = intents.length > 0;
  if (intents.length === 0) intents = intentsOf(request.text, tools);
  const aboutFiles = attachmentAnswer(messages, request.text, intents.length > 0);
  if (aboutFiles) return { type: 'text', text: aboutFiles };
  if (intents.length === 0) return { type: 'text', text: apiExampleAnswer(request.text) ?? renderHelp(request.text) };

  const offered = new Map(tools.map((t) => [t.name, t]));
  const calls: Intent[] = [];
  for (const intent of intents) {
    const tool = offered.get(intent.tool);
    if (!tool) return { type: 'text', text: renderUnavailable(intent.tool) };
    let missing = (tool.parameters?.required ?? []).filter((f) => intent.args[f] === undefined);
    // "…I still need the reason." -> "disk upgrade": a lone free-text answer is that field.
    if (answersQuestion && missing.length === 1 && FREE_TEXT_FIELDS.has(missing[0])) {
      const answer = request.text.trim().replace(/^(?:because(?:\s+of)?|due\s+to|it'?s|for)\s+/i, '').replace(/^(?:a|an|the)\s+/i, '').replace(/[.!?]+$/, '');
      if (answer) {
        intent.args[missing[0]] = answer;
        missing = [];
      }
    }
    if (missing.length > 0) return { type: 'text', text: renderQuestion(intent.tool, intent.args, missing) };
    // Only send arguments the schema knows, so strict servers and zod parsing accept them.
    const known = tool.parameters?.properties;
    const args = known ? Object.fromEntries(Object.entries(intent.args).filter(([k]) => k in known)) : intent.args;
    calls.push({ tool: intent.tool, args });
  }
  return { type: 'tool_calls', calls };
}
