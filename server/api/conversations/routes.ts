/**
 * /api/assistant: a user's conversations (create, list + search, rename, archive, restore), their
 * history and appended messages. Another user's conversation is 404, never 403.
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import {
  createConversation,
  getConversationForUser,
  listConversations,
  renameConversation,
  setConversationArchived,
  type Conversation,
} from '../../db/conversations.ts';
import { getEventHead } from '../../db/event-heads.ts';
import { forksOf, messagePath, readBranches } from '../../db/branches.ts';
import { withSnapshot } from '../../db/index.ts';
import { appendMessage, listMessages } from '../../db/messages.ts';
import { AirlockError } from '../../errors.ts';
import type { ApiContext } from '../context.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { requestUser, requireUser } from '../identity.ts';
import { parseInput } from '../../http/validate.ts';
import {
  AppendMessageBody,
  ConversationCursor,
  ConversationParams,
  CreateConversationBody,
  HistoryCursor,
  HistoryQuery,
  ExportQuery,
  ListConversationsQuery,
  RenameConversationBody,
} from './schemas.ts';
import { conversationJson, messageJson } from './serialize.ts';
import { branchMessages, conversationApprovals } from '../../db/conversation-export.ts';
import { exportFileName, exportJson, exportMarkdown } from './export.ts';

function found(conversation: Conversation | null): Conversation {
  if (!conversation) throw new AirlockError('NOT_FOUND', 'No such conversation.');
  return conversation;
}

export const conversationRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const { pool } = ctx;
  app.addHook('onRequest', requireUser(ctx));

  app.post('/conversations', async (request, reply) => {
    const body = parseInput(CreateConversationBody, request.body, 'body');
    const conversation = await createConversation(pool, { userId: requestUser(request).userId, title: body.title, text: body.text });
    return reply.status(201).send(conversationJson(conversation));
  });

  app.get('/conversations', async (request) => {
    const query = parseInput(ListConversationsQuery, request.query, 'query');
    const cursor = query.cursor ? decodeCursor(query.cursor, ConversationCursor) : null;
    const page = await listConversations(pool, {
      userId: requestUser(request).userId,
      archived: query.archived,
      query: query.q,
      after: cursor ? { updatedAt: cursor.u, id: cursor.i, rank: cursor.r } : null,
      limit: query.limit,
    });
    return {
      items: page.items.map(conversationJson),
      next_cursor: page.next ? encodeCursor({ u: page.next.updatedAt, i: page.next.id, r: page.next.rank }) : null,
    };
  });

  // One conversation (the sidebar reads its title back once the first answer named it).
  app.get('/conversations/:id', async (request) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    return conversationJson(found(await getConversationForUser(pool, { id, userId: requestUser(request).userId })));
  });

  app.patch('/conversations/:id', async (request) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    const { title } = parseInput(RenameConversationBody, request.body, 'body');
    return conversationJson(found(await renameConversation(pool, { id, userId: requestUser(request).userId, title })));
  });

  app.delete('/conversations/:id', async (request, reply) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    found(await setConversationArchived(pool, { id, userId: requestUser(request).userId, archived: true }));
    return reply.status(204).send();
  });

  app.post('/conversations/:id/restore', async (request) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    return conversationJson(found(await setConversationArchived(pool, { id, userId: requestUser(request).userId, archived: false })));
  });

  app.get('/conversations/:id/export', async (request, reply) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    const { format, branch } = parseInput(ExportQuery, request.query, 'query');
    const conversation = found(await getConversationForUser(pool, { id, userId: requestUser(request).userId }));
    // The branch shown (issue 37 item 8), or `?branch=N`; its approvals only.
    const [read, approvals] = await withSnapshot(pool, async (tx) => Promise.all([branchMessages(tx, id, branch), conversationApprovals(tx, id)]));
    if (!read) throw new AirlockError('NOT_FOUND', 'This conversation has no such branch.');
    const asked = new Set(read.messages.map((m) => m.metadata.approval_id));
    const shown = approvals.filter((a) => asked.has(a.id));
    reply.header('content-disposition', `attachment; filename="${exportFileName(conversation, format)}"`);
    if (format === 'json') return exportJson(conversation, read.messages, shown, read.shown);
    return reply.type('text/markdown; charset=utf-8').send(exportMarkdown(conversation, read.messages, shown, read.shown));
  });

  app.get('/history', async (request) => {
    const query = parseInput(HistoryQuery, request.query, 'query');
    found(await getConversationForUser(pool, { id: query.conversation_id, userId: requestUser(request).userId }));
    const before = query.before ? decodeCursor(query.before, HistoryCursor, 'before') : null;
    // One snapshot: the page and the ledger seq it reflects, so a client that then streams events
    // after `ledger_seq` misses nothing and sees nothing twice.
    // The branch shown (issue 29): the active one unless `branch` names another; its rows are
    // its parents' before each fork, then its own (db/branches.ts).
    const { page, ledgerSeq, branches, branch } = await withSnapshot(pool, async (tx) => {
      const branches = await readBranches(tx, query.conversation_id);
      const branch = query.branch ?? branches?.active ?? 0;
      if (branch !== 0 && !branches?.branches.some((b) => b.branch === branch)) throw new AirlockError('NOT_FOUND', 'This conversation has no such branch.');
      const path = messagePath(branches, branch);
      return { branches, branch, page: await listMessages(tx, { conversationId: query.conversation_id, beforeSeq: before?.s, limit: query.limit, path }), ledgerSeq: await getEventHead(tx, query.conversation_id) };
    });
    return {
      items: page.items.map(messageJson),
      next_before: page.nextBeforeSeq ? encodeCursor({ s: page.nextBeforeSeq }) : null,
      ledger_seq: ledgerSeq,
      active_branch: branches?.active ?? 0,
      branch,
      branches: forksOf(branches?.branches ?? [], 'messages').map((f) => ({ branch: f.branch, parent_branch: f.parent, from_message_seq: f.from })),
    };
  });

  app.post('/conversations/:id/messages', async (request, reply) => {
    const { id } = parseInput(ConversationParams, request.params, 'params');
    const body = parseInput(AppendMessageBody, request.body, 'body');
    found(await getConversationForUser(pool, { id, userId: requestUser(request).userId }));
    const message = await appendMessage(pool, {
      conversationId: id,
      role: body.role,
      content: body.content,
      metadata: body.metadata,
      requestId: body.request_id,
    });
    return reply.status(201).send(messageJson(message));
  });
};
