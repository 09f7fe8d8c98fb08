/**
 * The dashboards table: full-text search over title (A), tags and service (B), description (C),
 * with a substring fallback so partial words ("latenc") still find something.
 * @module
 */
import type { Queryable } from './pool.ts';

export interface Dashboard {
  id: string;
  title: string;
  description: string;
  tags: string[];
  service: string | null;
  url: string;
  panels: { title: string; unit: string }[];
}

/** Every column name is one word, so a row already has the domain shape. */
type DashboardRow = Dashboard;

function toDashboard(row: DashboardRow): Dashboard {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    tags: row.tags,
    service: row.service,
    url: row.url,
    panels: row.panels,
  };
}

const COLUMNS = 'd.id, d.title, d.description, d.tags, d.service, d.url, d.panels';

/** Best matches first (all dashboards by title without a query). */
export async function searchDashboards(
  q: Queryable,
  input: { query?: string; limit: number },
): Promise<(Dashboard & { score: number })[]> {
  const query = input.query?.trim();
  if (!query) {
    const { rows } = await q.query<DashboardRow>(`SELECT ${COLUMNS} FROM dashboards d ORDER BY d.title LIMIT $1`, [input.limit]);
    return rows.map((r) => ({ ...toDashboard(r), score: 0 }));
  }
  const { rows } = await q.query<DashboardRow & { score: number }>(
    `WITH q AS (SELECT websearch_to_tsquery('english', $1) AS tsq,
                       '%' || replace(replace(replace(lower($1), '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%' AS pattern)
     SELECT ${COLUMNS},
            ts_rank(d.search, q.tsq) + CASE WHEN lower(d.title) LIKE q.pattern THEN 0.05 ELSE 0 END AS score
     FROM dashboards d, q
     WHERE d.search @@ q.tsq
        OR lower(d.title || ' ' || d.description || ' ' || airlock_tags_text(d.tags) || ' ' || coalesce(d.service, '')) LIKE q.pattern
     ORDER BY score DESC, d.title LIMIT $2`,
    [query, input.limit],
  );
  return rows.map((r) => ({ ...toDashboard(r), score: Number(r.score) }));
}

export async function getDashboard(q: Queryable, id: string): Promise<Dashboard | null> {
  const { rows } = await q.query<DashboardRow>(`SELECT ${COLUMNS} FROM dashboards d WHERE d.id = $1`, [id]);
  return rows[0] ? toDashboard(rows[0]) : null;
}
