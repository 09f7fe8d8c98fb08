/**
 * A conversation as a file (issue 29 item 4): Markdown for people, JSON for scripts. Both carry
 * the transcript with its tool cards, the approvals (who, when, decision) and attachments by
 * name (never their bytes). One branch: the one shown (issue 37 item 8), named when there are
 * several. Pure: the route reads, these only shape.
 * @module
 */
import type { Conversation } from '../../db/conversations.ts';
import type { ExportApproval, ExportBranch, ExportMessage } from '../../db/conversation-export.ts';
import { conversationJson } from './serialize.ts';

const decision = (status: string) => (status === 'approved' ? 'confirmed' : status);
const fileNames = (m: ExportMessage): string[] =>
  (Array.isArray(m.metadata.files) ? m.metadata.files : []).map((f: { orig_name?: string; path?: string }) => f.orig_name ?? f.path?.split('/').pop() ?? 'file');

/** The JSON export: `{conversation, branch, branches, messages, approvals: [{id, tool, decision, decided_by, decided_at}]}`. */
export function exportJson(conversation: Conversation, messages: ExportMessage[], approvals: ExportApproval[], shown: ExportBranch = { branch: 0, count: 1 }) {
  return {
    conversation: conversationJson(conversation),
    branch: shown.branch,
    branches: shown.count,
    messages: messages.map((m) => ({
      id: m.id,
      role: m.role,
      content: m.content,
      metadata: m.metadata,
      attachments: fileNames(m),
      created_at: m.createdAt,
    })),
    approvals: approvals.map((a) => ({ id: a.id, tool: a.tool, decision: decision(a.status), decided_by: a.decidedBy, decided_at: a.decidedAt })),
  };
}

const fence = (value: unknown) => `\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``;

function messageMarkdown(m: ExportMessage, approvals: Map<string, ExportApproval>): string {
  const at = m.createdAt.toISOString();
  const md = m.metadata;
  if (m.role === 'user') {
    const files = fileNames(m);
    return `### User · ${at}\n\n${m.content}${files.length ? `\n\nAttachments: ${files.join(', ')}` : ''}`;
  }
  if (md.type === 'tool') {
    const result = md.error ? `Error: ${String(md.error)}` : md.output !== undefined ? fence(md.output) : '';
    return `#### Tool \`${String(md.tool)}\` (${String(md.status ?? 'done')}) · ${at}\n\nInput:\n\n${fence(md.input ?? {})}${result ? `\n\nResult:\n\n${result}` : ''}`;
  }
  if (md.type === 'approval') {
    const a = approvals.get(String(md.approval_id));
    const who = a?.decidedBy ? ` by ${a.decidedBy}` : '';
    const when = a?.decidedAt ? ` at ${a.decidedAt.toISOString()}` : '';
    return `#### Approval \`${String(md.tool)}\`: ${decision(a?.status ?? String(md.status ?? 'pending'))}${who}${when}\n\n${String(md.prompt ?? '')}`;
  }
  return `### Assistant · ${at}\n\n${m.content}`;
}

/** The Markdown export: a title, then each message, tool card and approval in order. */
export function exportMarkdown(conversation: Conversation, messages: ExportMessage[], approvals: ExportApproval[], shown: ExportBranch = { branch: 0, count: 1 }): string {
  const byId = new Map(approvals.map((a) => [a.id, a]));
  const title = conversation.title?.trim() || 'Untitled conversation';
  // Branches are numbered 0.. on the wire and shown 1/2 in the UI: the file says it the UI's way.
  const branch = shown.count > 1 ? ` · branch ${shown.branch + 1} of ${shown.count} (the one shown; \`?branch=N\` exports another)` : '';
  const head = `# ${title}\n\nExported ${new Date().toISOString()} · conversation ${conversation.id}${branch}`;
  return `${[head, ...messages.map((m) => messageMarkdown(m, byId))].join('\n\n')}\n`;
}

/** A file name from the title: letters, digits and dashes. */
export function exportFileName(conversation: Conversation, format: 'md' | 'json'): string {
  const base = (conversation.title ?? 'conversation').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'conversation';
  return `${base}.${format}`;
}
