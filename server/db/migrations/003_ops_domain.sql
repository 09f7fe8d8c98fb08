-- The operations domain the assistant's tools act on: services, environments, dashboards,
-- maintenance events, deployments, tasks. Seed data below makes the demo feel real.
CREATE TABLE IF NOT EXISTS environments (
  name          text PRIMARY KEY,
  description   text NOT NULL,
  region        text NOT NULL,
  cluster       text NOT NULL,
  url           text NOT NULL,
  deploy_freeze boolean NOT NULL DEFAULT false
);

CREATE TABLE IF NOT EXISTS services (
  name           text PRIMARY KEY,
  display_name   text NOT NULL,
  description    text NOT NULL,
  team           text NOT NULL,
  tier           integer NOT NULL CHECK (tier BETWEEN 1 AND 3),
  status         text NOT NULL CHECK (status IN ('healthy', 'degraded', 'down')),
  latency_p95_ms integer NOT NULL,
  error_rate_pct numeric(5, 2) NOT NULL,
  uptime_30d_pct numeric(6, 3) NOT NULL,
  depends_on     text[] NOT NULL DEFAULT '{}'
);

-- array_to_string is only STABLE; text[] -> text is immutable in practice, and a generated
-- column needs an immutable expression.
CREATE OR REPLACE FUNCTION airlock_tags_text(tags text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT array_to_string(tags, ' ') $$;

CREATE TABLE IF NOT EXISTS dashboards (
  id          text PRIMARY KEY,
  title       text NOT NULL,
  description text NOT NULL,
  tags        text[] NOT NULL DEFAULT '{}',
  service     text REFERENCES services (name),
  url         text NOT NULL,
  panels      jsonb NOT NULL DEFAULT '[]'::jsonb,
  search      tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A') ||
    setweight(to_tsvector('english', airlock_tags_text(tags) || ' ' || coalesce(service, '')), 'B') ||
    setweight(to_tsvector('english', description), 'C')
  ) STORED
);
CREATE INDEX IF NOT EXISTS dashboards_search ON dashboards USING gin (search);

CREATE TABLE IF NOT EXISTS maintenance_events (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  service    text NOT NULL REFERENCES services (name),
  reason     text NOT NULL,
  starts_at  timestamptz NOT NULL,
  ends_at    timestamptz NOT NULL,
  ended_at   timestamptz,
  created_by text NOT NULL,
  ended_by   text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (ends_at > starts_at)
);
CREATE INDEX IF NOT EXISTS maintenance_events_service ON maintenance_events (service, starts_at DESC);

CREATE TABLE IF NOT EXISTS deployments (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  service     text NOT NULL REFERENCES services (name),
  version     text NOT NULL,
  environment text NOT NULL REFERENCES environments (name),
  status      text NOT NULL CHECK (status IN ('succeeded', 'failed', 'rolled_back', 'in_progress')),
  deployed_by text NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  notes       text
);
CREATE INDEX IF NOT EXISTS deployments_recent ON deployments (started_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS deployments_service_env ON deployments (service, environment, started_at DESC);

CREATE TABLE IF NOT EXISTS tasks (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title       text NOT NULL,
  description text,
  service     text REFERENCES services (name),
  priority    text NOT NULL DEFAULT 'medium' CHECK (priority IN ('low', 'medium', 'high')),
  status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'done')),
  created_by  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS tasks_recent ON tasks (created_at DESC, id DESC);

-- Seed data ------------------------------------------------------------------------------------
INSERT INTO environments (name, description, region, cluster, url, deploy_freeze) VALUES
  ('production', 'Customer-facing production, multi-AZ', 'eu-west-1', 'prod-eks-01', 'https://shop.example.com', false),
  ('staging', 'Pre-production mirror of production, nightly data refresh', 'eu-west-1', 'stg-eks-01', 'https://staging.shop.example.com', false),
  ('dev', 'Shared development environment, redeployed on every merge', 'eu-central-1', 'dev-eks-01', 'https://dev.shop.example.com', false)
ON CONFLICT DO NOTHING;

INSERT INTO services (name, display_name, description, team, tier, status, latency_p95_ms, error_rate_pct, uptime_30d_pct, depends_on) VALUES
  ('payments-api', 'Payments API', 'Card authorisation, capture and refunds via the PSP', 'payments', 1, 'healthy', 182, 0.12, 99.982, '{db-primary,auth-service,kafka-broker}'),
  ('checkout-api', 'Checkout API', 'Cart to order: pricing, tax, payment orchestration', 'checkout', 1, 'healthy', 240, 0.31, 99.961, '{payments-api,inventory-service,orders-api}'),
  ('orders-api', 'Orders API', 'Order lifecycle, history and status for customers and support', 'checkout', 1, 'healthy', 121, 0.08, 99.990, '{db-primary,kafka-broker}'),
  ('db-primary', 'Primary PostgreSQL', 'PostgreSQL 16 primary with two streaming replicas', 'platform', 1, 'healthy', 9, 0.00, 99.998, '{}'),
  ('auth-service', 'Auth Service', 'Login, sessions and OAuth tokens for customers', 'identity', 1, 'healthy', 64, 0.05, 99.995, '{db-primary,redis-cache}'),
  ('search-api', 'Search API', 'Product search and autocomplete on OpenSearch', 'discovery', 2, 'degraded', 870, 2.40, 99.710, '{inventory-service}'),
  ('notifications', 'Notifications', 'E-mail, SMS and push delivery with retry queues', 'engagement', 2, 'healthy', 310, 0.44, 99.930, '{kafka-broker}'),
  ('cdn-edge', 'CDN Edge', 'Edge caching and TLS termination for static assets', 'platform', 1, 'healthy', 38, 0.02, 99.999, '{}'),
  ('inventory-service', 'Inventory Service', 'Stock levels and reservations per warehouse', 'fulfilment', 1, 'healthy', 95, 0.10, 99.975, '{db-primary,kafka-broker}'),
  ('redis-cache', 'Redis Cache', 'Session and hot-path cache cluster (6 shards)', 'platform', 2, 'healthy', 3, 0.00, 99.997, '{}'),
  ('kafka-broker', 'Kafka', 'Event bus: orders, payments, inventory topics', 'platform', 1, 'healthy', 14, 0.01, 99.993, '{}'),
  ('web-frontend', 'Web Frontend', 'Server-rendered storefront', 'storefront', 1, 'healthy', 410, 0.27, 99.954, '{checkout-api,search-api,cdn-edge,auth-service}')
ON CONFLICT DO NOTHING;

INSERT INTO dashboards (id, title, description, tags, service, url, panels) VALUES
  ('payments-latency', 'Payments API latency', 'p50/p95/p99 latency of authorisation and capture calls, split by PSP', '{latency,payments,slo}', 'payments-api', '/d/payments-latency', '[{"title":"p95 latency","unit":"ms"},{"title":"p99 latency","unit":"ms"},{"title":"PSP response time","unit":"ms"}]'),
  ('payments-errors', 'Payments errors and declines', 'HTTP 5xx rate, PSP declines by reason, retry outcomes', '{errors,payments,declines}', 'payments-api', '/d/payments-errors', '[{"title":"5xx rate","unit":"%"},{"title":"Declines by reason","unit":"count"}]'),
  ('checkout-funnel', 'Checkout funnel', 'Cart, shipping, payment and confirmation conversion with drop-off per step', '{business,conversion,checkout}', 'checkout-api', '/d/checkout-funnel', '[{"title":"Conversion","unit":"%"},{"title":"Drop-off by step","unit":"%"}]'),
  ('checkout-latency', 'Checkout API latency and errors', 'Request latency percentiles and error rate of checkout endpoints', '{latency,errors,checkout,slo}', 'checkout-api', '/d/checkout-latency', '[{"title":"p95 latency","unit":"ms"},{"title":"Error rate","unit":"%"}]'),
  ('db-primary-overview', 'PostgreSQL primary overview', 'Connections, transactions per second, replication lag, slow queries, disk usage', '{database,postgres,replication,capacity}', 'db-primary', '/d/db-primary-overview', '[{"title":"TPS","unit":"tx/s"},{"title":"Replication lag","unit":"s"},{"title":"Slow queries","unit":"count"}]'),
  ('auth-logins', 'Auth logins and sessions', 'Login success/failure rate, token issuance, active sessions', '{auth,security,errors}', 'auth-service', '/d/auth-logins', '[{"title":"Login failures","unit":"%"},{"title":"Active sessions","unit":"count"}]'),
  ('search-performance', 'Search latency and relevance', 'Query latency, zero-result rate and OpenSearch cluster health', '{latency,search,opensearch}', 'search-api', '/d/search-performance', '[{"title":"p95 latency","unit":"ms"},{"title":"Zero results","unit":"%"}]'),
  ('notifications-delivery', 'Notification delivery', 'Delivery rate, bounces and queue depth per channel (e-mail, SMS, push)', '{notifications,queues,errors}', 'notifications', '/d/notifications-delivery', '[{"title":"Delivered","unit":"%"},{"title":"Queue depth","unit":"count"}]'),
  ('cdn-traffic', 'CDN traffic and cache hit ratio', 'Edge requests, bandwidth, cache hit ratio and origin errors', '{cdn,traffic,cache}', 'cdn-edge', '/d/cdn-traffic', '[{"title":"Hit ratio","unit":"%"},{"title":"Bandwidth","unit":"Gbit/s"}]'),
  ('inventory-stock', 'Inventory reservations', 'Reservation throughput, stock sync lag and oversell events', '{inventory,throughput,kafka}', 'inventory-service', '/d/inventory-stock', '[{"title":"Reservations/s","unit":"1/s"},{"title":"Sync lag","unit":"s"}]'),
  ('redis-overview', 'Redis cache overview', 'Memory, evictions, hit rate and command latency per shard', '{cache,redis,latency,capacity}', 'redis-cache', '/d/redis-overview', '[{"title":"Hit rate","unit":"%"},{"title":"Evictions","unit":"1/s"}]'),
  ('kafka-lag', 'Kafka consumer lag', 'Consumer group lag and throughput per topic', '{kafka,queues,lag,throughput}', 'kafka-broker', '/d/kafka-lag', '[{"title":"Lag","unit":"messages"},{"title":"Throughput","unit":"msg/s"}]'),
  ('web-vitals', 'Storefront web vitals', 'LCP, INP and CLS from real users, by page type', '{frontend,latency,web-vitals}', 'web-frontend', '/d/web-vitals', '[{"title":"LCP p75","unit":"ms"},{"title":"INP p75","unit":"ms"}]'),
  ('slo-overview', 'SLO overview', 'Error budget burn for every tier-1 service: availability and latency objectives', '{slo,errors,latency,availability}', NULL, '/d/slo-overview', '[{"title":"Error budget remaining","unit":"%"}]'),
  ('deployments-timeline', 'Deployments timeline', 'Every deployment per environment with change failure rate', '{deployments,releases,dora}', NULL, '/d/deployments-timeline', '[{"title":"Deploys per day","unit":"count"},{"title":"Change failure rate","unit":"%"}]'),
  ('k8s-capacity', 'Cluster capacity', 'CPU, memory and pod headroom per cluster and namespace', '{kubernetes,capacity,infrastructure}', NULL, '/d/k8s-capacity', '[{"title":"CPU requested","unit":"%"},{"title":"Memory requested","unit":"%"}]')
ON CONFLICT DO NOTHING;

INSERT INTO maintenance_events (service, reason, starts_at, ends_at, ended_at, created_by, ended_by)
SELECT * FROM (VALUES
  ('db-primary', 'PostgreSQL minor upgrade 16.3 -> 16.4 with replica failover', now() - interval '9 days', now() - interval '9 days' + interval '45 minutes', now() - interval '9 days' + interval '38 minutes', 'admin', 'admin'),
  ('kafka-broker', 'Broker disk expansion on kafka-2', now() - interval '4 days', now() - interval '4 days' + interval '90 minutes', now() - interval '4 days' + interval '70 minutes', 'operator', 'operator'),
  ('search-api', 'OpenSearch index rebuild after mapping change', now() - interval '26 hours', now() - interval '24 hours', NULL, 'operator', NULL),
  ('notifications', 'SMS provider migration window', now() + interval '2 days', now() + interval '2 days' + interval '2 hours', NULL, 'operator', NULL),
  ('cdn-edge', 'TLS certificate rotation on edge nodes', now() + interval '5 days', now() + interval '5 days' + interval '30 minutes', NULL, 'admin', NULL)
) AS seed (service, reason, starts_at, ends_at, ended_at, created_by, ended_by)
WHERE NOT EXISTS (SELECT 1 FROM maintenance_events);

INSERT INTO deployments (service, version, environment, status, deployed_by, started_at, finished_at, notes)
SELECT service, version, environment, status, deployed_by, now() - age, now() - age + interval '6 minutes', notes FROM (VALUES
  ('payments-api', '2.14.0', 'production', 'succeeded', 'admin', interval '12 days', 'PSP failover support'),
  ('payments-api', '2.14.1', 'staging', 'succeeded', 'admin', interval '3 days', 'Retry budget tuning'),
  ('payments-api', '2.14.1', 'dev', 'succeeded', 'ci', interval '4 days', NULL),
  ('checkout-api', '5.2.3', 'production', 'succeeded', 'admin', interval '6 days', 'Tax rounding fix'),
  ('checkout-api', '5.3.0', 'staging', 'succeeded', 'admin', interval '1 day', 'Saved carts'),
  ('checkout-api', '5.3.0', 'dev', 'succeeded', 'ci', interval '2 days', NULL),
  ('orders-api', '3.8.1', 'production', 'succeeded', 'admin', interval '15 days', NULL),
  ('orders-api', '3.8.1', 'staging', 'succeeded', 'admin', interval '16 days', NULL),
  ('auth-service', '1.22.0', 'production', 'rolled_back', 'admin', interval '8 days', 'Session store regression, rolled back to 1.21.4'),
  ('auth-service', '1.21.4', 'production', 'succeeded', 'admin', interval '8 days' - interval '20 minutes', 'Rollback'),
  ('auth-service', '1.22.1', 'staging', 'succeeded', 'admin', interval '2 days', 'Session store fix'),
  ('search-api', '0.19.2', 'production', 'succeeded', 'admin', interval '27 hours', 'New analyzer; index rebuild required'),
  ('search-api', '0.19.2', 'staging', 'succeeded', 'admin', interval '3 days', NULL),
  ('notifications', '4.0.7', 'production', 'succeeded', 'admin', interval '10 days', NULL),
  ('notifications', '4.1.0', 'staging', 'failed', 'admin', interval '20 hours', 'Template migration failed on staging data'),
  ('inventory-service', '7.3.0', 'production', 'succeeded', 'admin', interval '5 days', 'Warehouse sync batching'),
  ('inventory-service', '7.3.0', 'staging', 'succeeded', 'admin', interval '6 days', NULL),
  ('web-frontend', '2026.11.3', 'production', 'succeeded', 'admin', interval '2 days', 'Holiday banners'),
  ('web-frontend', '2026.11.4', 'staging', 'succeeded', 'admin', interval '10 hours', NULL),
  ('web-frontend', '2026.11.5', 'dev', 'succeeded', 'ci', interval '3 hours', NULL)
) AS seed (service, version, environment, status, deployed_by, age, notes)
WHERE NOT EXISTS (SELECT 1 FROM deployments);

INSERT INTO tasks (title, description, service, priority, status, created_by)
SELECT * FROM (VALUES
  ('Investigate search-api p95 latency regression', 'p95 went from 300 ms to 870 ms after 0.19.2', 'search-api', 'high', 'in_progress', 'operator'),
  ('Fix notifications 4.1.0 template migration', 'Failed on staging data; see deployment notes', 'notifications', 'medium', 'open', 'operator')
) AS seed (title, description, service, priority, status, created_by)
WHERE NOT EXISTS (SELECT 1 FROM tasks);
