/** create_task, list_tasks. */
import type { FastifyPluginAsync } from 'fastify';
import { createTask, listTasks } from '../../db/tasks.ts';
import type { ApiContext } from '../context.ts';
import { requestUser } from '../identity.ts';
import { parseInput } from '../../http/validate.ts';
import { runEffect } from './effects.ts';
import { toolRoute } from './route-config.ts';
import { CreateTaskBody, TasksQuery } from './schemas.ts';
import { taskJson } from './serialize.ts';

export const taskTools: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.post('/tasks', toolRoute('create_task'), async (request, reply) => {
    const body = parseInput(CreateTaskBody, request.body, 'body');
    const user = requestUser(request);
    return runEffect(ctx, request, reply, { operation: 'create_task', args: body, status: 201 }, async (tx) =>
      taskJson(await createTask(tx, { ...body, createdBy: user.username })),
    );
  });

  app.get('/tasks', toolRoute('list_tasks'), async (request) => {
    const query = parseInput(TasksQuery, request.query, 'query');
    const tasks = await listTasks(ctx.pool, query);
    return { count: tasks.length, items: tasks.map(taskJson) };
  });
};
