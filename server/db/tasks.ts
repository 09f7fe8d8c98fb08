/**
 * The tasks table: follow-ups the assistant files for people.
 * @module
 */
import { AirlockError } from '../errors.ts';
import type { Queryable } from './pool.ts';
import { serviceExists } from './services.ts';

export type TaskPriority = 'low' | 'medium' | 'high';

export interface Task {
  id: string;
  title: string;
  description: string | null;
  service: string | null;
  priority: TaskPriority;
  status: 'open' | 'in_progress' | 'done';
  createdBy: string;
  createdAt: Date;
}

interface TaskRow {
  id: string;
  title: string;
  description: string | null;
  service: string | null;
  priority: TaskPriority;
  status: Task['status'];
  created_by: string;
  created_at: Date;
}

function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    service: row.service,
    priority: row.priority,
    status: row.status,
    createdBy: row.created_by,
    createdAt: row.created_at,
  };
}

/** Files a task. Throws NOT_FOUND when `service` is given but unknown. */
export async function createTask(
  q: Queryable,
  input: { title: string; description?: string | null; service?: string | null; priority: TaskPriority; createdBy: string },
): Promise<Task> {
  if (input.service && !(await serviceExists(q, input.service))) {
    throw new AirlockError('NOT_FOUND', `Unknown service "${input.service}".`, { details: { service: input.service } });
  }
  const { rows } = await q.query<TaskRow>(
    `INSERT INTO tasks (title, description, service, priority, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [input.title, input.description ?? null, input.service ?? null, input.priority, input.createdBy],
  );
  return toTask(rows[0]);
}

/** Newest first. */
export async function listTasks(q: Queryable, input: { limit: number }): Promise<Task[]> {
  const { rows } = await q.query<TaskRow>('SELECT * FROM tasks ORDER BY created_at DESC, id DESC LIMIT $1', [input.limit]);
  return rows.map(toTask);
}
