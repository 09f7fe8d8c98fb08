/**
 * The MCP tool `chat`'s approval question (MCP elicitation, on clients that support it): a paused
 * run asks the user to confirm or deny the action it names, and the answer becomes the confirm or
 * deny call. Declining denies; cancelling (closing the prompt) leaves the approval pending and
 * returns the paused result, which says how to decide later. Pure.
 * @module
 */
import type { McpElicitation } from '../gradio/index.ts';
import type { ChatMessage } from '../../src/lib/wire/index.ts';

export function chatApprovalQuestion(outputs: unknown[], now: () => number = Date.now): McpElicitation | null {
  const m = (outputs[0] as ChatMessage | undefined)?.metadata;
  if (!m || m.type !== 'confirm_required') return null;
  const ids = { conversation_id: m.conversation_id, approval_id: m.approval_id };
  return {
    message: `Approval needed: ${m.prompt}\nTool ${m.tool} with ${JSON.stringify(m.input)}. Expires ${m.expires_at}.`,
    // The user may take as long as the approval lives (at least a second, so an answer can land).
    timeoutMs: Math.max(1_000, Date.parse(m.expires_at) - now()) || undefined,
    requestedSchema: {
      type: 'object',
      properties: { decision: { type: 'string', title: 'Decision', enum: ['confirm', 'deny'], description: 'confirm runs the action; deny refuses it' } },
      required: ['decision'],
    },
    next(answer) {
      if (answer.action === 'cancel') return null;
      const decision = answer.action === 'accept' && answer.content?.decision === 'confirm' ? 'confirm' : 'deny';
      return { message: decision, action: decision, ...ids };
    },
  };
}
