import { readdirSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { loadAppConfig } from '../../src/config.js';
import { ConfigError, loadConfig, ROLES } from '../../src/infra/config/app-config.js';
import { MetricsService } from '../../src/infra/metrics/metrics.service.js';
import { ChannelMetrics } from '../../src/modules/channels/channel-metrics.js';
import { WaitingMetrics } from '../../src/modules/upstream-watch/waiting-metrics.js';
import { knownVariables } from '../support/known-variables.js';

/**
 * There is no cluster, no promtool and no Grafana here: these checks parse the files under deploy/ and hold
 * them to the service's own sources (package.json, the Dockerfile, app-config.ts, the health and metrics
 * controllers, MetricsService), so a renamed variable, route, port or metric breaks the build, not a rollout.
 */
const root = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');

/** Parsed YAML and JSON, read field by field: the checks below say what each field must be. */
type Obj = any;

function yamlDocuments(file: string): Obj[] {
  const docs = parseAllDocuments(read(file));
  for (const doc of docs) if (doc.errors.length > 0) throw new Error(`${file} is not valid YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
  return docs.map((d) => d.toJS()).filter((d) => d !== null && d !== undefined);
}

const K8S = 'deploy/k8s/';
const k8sFiles = readdirSync(new URL(K8S, root)).filter((f) => f.endsWith('.yaml'));
const SECRET_TEMPLATE = 'secret.example.yaml';
const manifestFiles = k8sFiles.filter((f) => f !== 'kustomization.yaml' && f !== SECRET_TEMPLATE);
const manifests: Obj[] = manifestFiles.flatMap((f) => yamlDocuments(K8S + f));
const kustomization: Obj = yamlDocuments(`${K8S}kustomization.yaml`)[0];
const secret: Obj = yamlDocuments(K8S + SECRET_TEMPLATE)[0];
const ofKind = (kind: string) => manifests.filter((m) => m.kind === kind);
const configMap: Obj = ofKind('ConfigMap')[0];
const deployments: Obj[] = ofKind('Deployment');
const ROLE_DEPLOYMENTS = { api: 'media-gateway-api', worker: 'media-gateway-worker' } as const;
const deployment = (name: string): Obj => deployments.find((d) => d.metadata.name === name);
const containerOf = (d: Obj): Obj => d.spec.template.spec.containers[0];
const envOf = (d: Obj): Obj[] => containerOf(d).env ?? [];
const literalEnv = (d: Obj): Record<string, string> => Object.fromEntries(envOf(d).filter((e: Obj) => 'value' in e).map((e: Obj) => [e.name, String(e.value)]));

/** A label selector's matchLabels (or a Service's plain selector) selects these labels. */
const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** The defaults the service applies to an empty environment. */
const defaults = loadConfig({});

/** GET routes of a Nest controller file, read from its decorators: @Controller('health') + @Get('ready') → /health/ready. */
function routesOf(file: string): { routes: string[]; isPublic: boolean; takesMetricsToken: boolean } {
  const source = read(file);
  const prefix = /@Controller\('([^']*)'\)/.exec(source)![1];
  const routes = [...source.matchAll(/@Get\((?:'([^']*)')?\)/g)].map((m) => `/${[prefix, m[1]].filter(Boolean).join('/')}`);
  // probes send no credential: the whole controller must be public; scrapers send the metrics token
  return { routes, isPublic: /@Public\(\)(\s*\n\s*@\w+\([^)]*\))*\s*\n\s*@Controller/.test(source), takesMetricsToken: /@MetricsReader\(\)(\s*\n\s*@\w+\([^)]*\))*\s*\n\s*@Controller/.test(source) };
}
const health = routesOf('src/modules/health/health.controller.ts');
const metricsRoute = routesOf('src/modules/health/metrics.controller.ts');

const KNOWN_VARIABLES = knownVariables();
/** Variables that hold credentials: they may only come from the Secret. */
const SECRET_LIKE = /KEY|SECRET|PASSWORD|TOKEN|^DATABASE_URL$/;

describe('deploy/k8s: Kubernetes manifests', () => {
  const pkg = JSON.parse(read('package.json'));
  const dockerfile = read('Dockerfile');

  it('parse, and every object has apiVersion, kind and metadata.name, and no namespace of its own', () => {
    expect(manifests.length).toBeGreaterThan(0);
    for (const m of [...manifests, secret]) {
      expect([m.metadata?.name, typeof m.apiVersion, typeof m.kind, typeof m.metadata?.name]).toEqual([m.metadata?.name, 'string', 'string', 'string']);
      expect([m.kind, m.metadata.name, m.metadata.namespace]).toEqual([m.kind, m.metadata.name, undefined]);
    }
    const ids = manifests.map((m) => `${m.kind}/${m.metadata.name}`);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ofKind('ConfigMap')).toHaveLength(1);
  });

  it('kustomization.yaml lists every manifest but the Secret template, and pins the image to package.json', () => {
    expect(kustomization.kind).toBe('Kustomization');
    expect([...kustomization.resources].sort()).toEqual([...manifestFiles].sort());
    expect(kustomization.resources).not.toContain(SECRET_TEMPLATE);
    expect(kustomization.images).toEqual([expect.objectContaining({ name: pkg.name, newTag: pkg.version })]);
  });

  it('runs both roles from the image the Dockerfile builds (package.json name:version), with its own command', () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(Object.values(ROLE_DEPLOYMENTS).sort());
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/main.js"\]/m);
    for (const d of deployments) {
      expect(d.apiVersion).toBe('apps/v1');
      expect(d.spec.template.spec.containers).toHaveLength(1);
      const c = containerOf(d);
      expect([d.metadata.name, c.image]).toEqual([d.metadata.name, `${pkg.name}:${pkg.version}`]);
      // the image's CMD starts the service; overriding it here would skip what the Dockerfile sets up
      expect([d.metadata.name, c.command, c.args]).toEqual([d.metadata.name, undefined, undefined]);
    }
  });

  it('gives each Deployment one role (ROLE=api or worker) and its pods labels the other role does not match', () => {
    for (const [role, name] of Object.entries(ROLE_DEPLOYMENTS)) {
      const d = deployment(name);
      expect(ROLES).toContain(role);
      expect([name, literalEnv(d).ROLE]).toEqual([name, role]);
      const labels = d.spec.template.metadata.labels;
      expect(selects(d.spec.selector.matchLabels, labels)).toBe(true);
      for (const other of deployments.filter((o) => o !== d)) expect([name, selects(d.spec.selector.matchLabels, other.spec.template.metadata.labels)]).toEqual([name, false]);
    }
    // the service's default is the host's cores + 1, which in a container is the whole node's
    expect(literalEnv(deployment(ROLE_DEPLOYMENTS.worker)).WORKER_CONCURRENCY).toMatch(/^\d+$/);
  });

  it("listens on the service's PORT, which the Service targets and the Dockerfile exposes", () => {
    expect(defaults.port).toBe(3000);
    const port = Number(configMap.data.PORT ?? defaults.port);
    expect(dockerfile).toMatch(new RegExp(`^EXPOSE ${port}$`, 'm'));
    expect(dockerfile).toMatch(new RegExp(`^ENV .*\\bPORT=${port}\\b`, 'm'));
    for (const d of deployments) {
      const ports = containerOf(d).ports;
      expect([d.metadata.name, ports]).toEqual([d.metadata.name, [expect.objectContaining({ name: 'http', containerPort: port })]]);
    }
    const services = ofKind('Service');
    expect(services).toHaveLength(1);
    const [service] = services;
    const api = deployment(ROLE_DEPLOYMENTS.api);
    expect(selects(service.spec.selector, api.spec.template.metadata.labels)).toBe(true);
    expect(selects(service.spec.selector, deployment(ROLE_DEPLOYMENTS.worker).spec.template.metadata.labels)).toBe(false);
    for (const p of service.spec.ports) {
      const target = containerOf(api).ports.find((cp: Obj) => cp.name === p.targetPort || cp.containerPort === p.targetPort);
      expect([p.name, target?.containerPort]).toEqual([p.name, port]);
    }
  });

  it('probes public routes of the health controller on that port: liveness /health, readiness /health/ready', () => {
    expect(health.isPublic).toBe(true);
    expect(health.routes.sort()).toEqual(['/health', '/health/ready']);
    for (const d of deployments) {
      const c = containerOf(d);
      const portOf = (probe: Obj) => c.ports.find((p: Obj) => p.name === probe.httpGet.port || p.containerPort === probe.httpGet.port)?.containerPort;
      for (const kind of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const probe = c[kind];
        expect([d.metadata.name, kind, health.routes.includes(probe?.httpGet?.path), portOf(probe)]).toEqual([d.metadata.name, kind, true, c.ports[0].containerPort]);
      }
      // liveness must stay up during a database outage (the process waits it out): never the readiness route
      expect([d.metadata.name, c.livenessProbe.httpGet.path, c.startupProbe.httpGet.path, c.readinessProbe.httpGet.path]).toEqual([d.metadata.name, '/health', '/health', '/health/ready']);
    }
  });

  it('sets only variables the service reads, and never a credential as a literal', () => {
    const set = [...Object.keys(configMap.data), ...deployments.flatMap((d) => envOf(d).map((e: Obj) => e.name))];
    for (const name of set) expect([name, KNOWN_VARIABLES.has(name)]).toEqual([name, true]);
    for (const name of Object.keys(configMap.data)) expect([name, SECRET_LIKE.test(name)]).toEqual([name, false]);
    for (const d of deployments) {
      for (const e of envOf(d)) {
        if (SECRET_LIKE.test(e.name)) expect([d.metadata.name, e.name, e.value, typeof e.valueFrom?.secretKeyRef]).toEqual([d.metadata.name, e.name, undefined, 'object']);
      }
      expect(containerOf(d).envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }]);
    }
  });

  it('takes every secret from a key of the Secret template, which holds only placeholders', () => {
    expect(secret.kind).toBe('Secret');
    const keys = Object.keys(secret.stringData);
    // the template names every credential the service reads
    for (const name of KNOWN_VARIABLES) if (SECRET_LIKE.test(name)) expect([name, keys.includes(name)]).toEqual([name, true]);
    for (const [key, value] of Object.entries(secret.stringData)) expect([key, value]).toEqual([key, expect.stringMatching(/^REPLACE_ME\b/)]);
    for (const d of deployments) {
      const refs = envOf(d).filter((e: Obj) => e.valueFrom?.secretKeyRef);
      expect(refs.length).toBeGreaterThan(0);
      for (const e of refs) {
        const ref = e.valueFrom.secretKeyRef;
        expect([d.metadata.name, e.name, ref.name, keys.includes(ref.key), ref.key]).toEqual([d.metadata.name, e.name, secret.metadata.name, true, e.name]);
      }
      // unset, the service would start an embedded PostgreSQL in every pod: a missing key must stop the pod instead
      const db = refs.find((e: Obj) => e.name === 'DATABASE_URL');
      expect([d.metadata.name, db?.valueFrom.secretKeyRef.optional]).toEqual([d.metadata.name, undefined]);
    }
  });

  it("passes the service's own configuration checks once the Secret is filled in, and refuses the bare template", () => {
    const filled: Record<string, string> = {
      DATABASE_URL: 'postgresql://gateway:pw@postgres:5432/media_gateway',
      ADMIN_API_KEY: 'a'.repeat(32),
      CHANNEL_SECRET_KEY: '0f'.repeat(32),
      RELAY_API_KEY: 'relay-key',
      RELAY_KLING_ACCESS_KEY: 'ak',
      RELAY_KLING_SECRET_KEY: 'sk',
      S3_ACCESS_KEY_ID: 'id',
      S3_SECRET_ACCESS_KEY: 'secret',
      METRICS_TOKEN: 'm'.repeat(32),
    };
    for (const [role, name] of Object.entries(ROLE_DEPLOYMENTS)) {
      const d = deployment(name);
      const secrets = Object.fromEntries(envOf(d).filter((e: Obj) => e.valueFrom?.secretKeyRef).map((e: Obj) => [e.name, filled[e.name]]));
      const config = loadAppConfig({ ...configMap.data, ...literalEnv(d), ...secrets }, { cwd: '/app' });
      expect([name, config.role, config.port, config.databaseUrl]).toEqual([name, role, containerOf(d).ports[0].containerPort, filled.DATABASE_URL]);
      // more than one pod: media must be where every pod reads it
      expect([name, config.storageDriver]).toEqual([name, expect.stringMatching(/^(s3|postgres)$/)]);
      // both roles serve /metrics with the token Prometheus sends (workers have no admin key)
      expect([name, config.metricsToken]).toEqual([name, filled.METRICS_TOKEN]);
      // behind the Ingress: each client's own address (X-Forwarded-For from one proxy), not the proxy's
      expect([name, config.trustProxy]).toEqual([name, 1]);

      const bare = Object.fromEntries(envOf(d).filter((e: Obj) => e.valueFrom?.secretKeyRef).map((e: Obj) => [e.name, secret.stringData[e.name]]));
      let error: unknown;
      try {
        loadAppConfig({ ...configMap.data, ...literalEnv(d), ...bare }, { cwd: '/app' });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toMatch(/DATABASE_URL/);
      expect((error as ConfigError).message).toMatch(/CHANNEL_SECRET_KEY/);
      expect((error as ConfigError).message).toMatch(/METRICS_TOKEN/);
      if (role === 'api') expect((error as ConfigError).message).toMatch(/ADMIN_API_KEY/);
    }
  });

  it('gives each pod longer than its preStop and the drain (SHUTDOWN_TIMEOUT_S) before it is killed', () => {
    const shutdownS = Number(configMap.data.SHUTDOWN_TIMEOUT_S ?? defaults.shutdownTimeoutS);
    expect(shutdownS).toBeGreaterThan(0);
    for (const d of deployments) {
      const preStop = containerOf(d).lifecycle?.preStop?.exec?.command;
      const preStopS = preStop ? Number(preStop.join(' ').match(/^sleep (\d+)$/)![1]) : 0;
      expect([d.metadata.name, d.spec.template.spec.terminationGracePeriodSeconds > preStopS + shutdownS]).toEqual([d.metadata.name, true]);
    }
  });

  it('runs as a numeric non-root user on a read-only root, with DATA_DIR and /tmp writable', () => {
    expect(dockerfile).toMatch(/^USER node$/m); // a name, so the kubelet needs runAsUser to check runAsNonRoot
    const dataDir = configMap.data.DATA_DIR;
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      const c = containerOf(d);
      expect([d.metadata.name, pod.securityContext.runAsNonRoot, pod.securityContext.runAsUser > 0]).toEqual([d.metadata.name, true, true]);
      expect([d.metadata.name, c.securityContext]).toEqual([d.metadata.name, expect.objectContaining({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })]);
      const mounts = c.volumeMounts.map((m: Obj) => m.mountPath);
      expect([d.metadata.name, mounts]).toEqual([d.metadata.name, expect.arrayContaining([dataDir, '/tmp'])]);
      for (const m of c.volumeMounts) expect([d.metadata.name, m.name, pod.volumes.some((v: Obj) => v.name === m.name)]).toEqual([d.metadata.name, m.name, true]);
    }
  });

  it('requests CPU and memory and limits memory', () => {
    for (const d of deployments) {
      const { requests, limits } = containerOf(d).resources;
      expect([d.metadata.name, typeof requests.cpu, typeof requests.memory, typeof limits.memory]).toEqual([d.metadata.name, 'string', 'string', 'string']);
    }
  });

  it('has a PodDisruptionBudget and an autoscaling/v2 HorizontalPodAutoscaler for each Deployment, which sets no replicas', () => {
    const pdbs = ofKind('PodDisruptionBudget');
    const hpas = ofKind('HorizontalPodAutoscaler');
    for (const d of deployments) {
      const name = d.metadata.name;
      const labels = d.spec.template.metadata.labels;
      const mine = pdbs.filter((p) => selects(p.spec.selector.matchLabels, labels));
      expect([name, mine.length]).toEqual([name, 1]);
      expect(mine[0].apiVersion).toBe('policy/v1');
      for (const other of deployments.filter((o) => o !== d)) expect(selects(mine[0].spec.selector.matchLabels, other.spec.template.metadata.labels)).toBe(false);

      const hpa = hpas.filter((h) => h.spec.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === name);
      expect([name, hpa.length]).toEqual([name, 1]);
      expect([hpa[0].apiVersion, hpa[0].spec.scaleTargetRef.apiVersion]).toEqual(['autoscaling/v2', 'apps/v1']);
      const { minReplicas, maxReplicas, metrics } = hpa[0].spec;
      expect([name, minReplicas >= 2, maxReplicas >= minReplicas]).toEqual([name, true, true]);
      // the autoscaler owns the count: a replicas field would be reset at every kubectl apply
      expect([name, d.spec.replicas]).toEqual([name, undefined]);
      // a disruption may always take one pod, and never all of them
      const pdb = mine[0].spec;
      const disruptable = pdb.maxUnavailable ?? minReplicas - pdb.minAvailable;
      expect([name, typeof disruptable, disruptable >= 1, disruptable < minReplicas]).toEqual([name, 'number', true, true]);
      // a Utilization target is a share of the container's request
      for (const m of metrics.filter((x: Obj) => x.type === 'Resource')) expect([name, m.resource.name, typeof containerOf(d).resources.requests[m.resource.name]]).toEqual([name, m.resource.name, 'string']);
    }
    expect(pdbs).toHaveLength(deployments.length);
    expect(hpas).toHaveLength(deployments.length);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Metrics used by the dashboard and the alerts

/** prom-client's default process and Node.js metrics (collectDefaultMetrics, prefixed mgw_): not ones the dashboard must show. */
const DEFAULT_METRIC = /^mgw_(process_|nodejs_)/;
/** Not the service's: Prometheus's own per-target series, and kube-state-metrics' (MediaGatewayDatabaseUnavailable). */
const EXTERNAL_METRICS = new Set(['up', 'kube_deployment_status_replicas_available', 'kube_deployment_spec_replicas']);
/** Labels the scrape job adds to every series (scrape-config.yaml, podmonitor.yaml), and a bucket's le. */
const TARGET_LABELS = ['job', 'instance', 'namespace', 'pod', 'role', 'container', 'le'];
const SCRAPE_JOB = 'media-gateway';

interface SeriesInfo {
  metric: string;
  type: string;
  labels: string[];
}

/**
 * Each series name the service exposes (a histogram: _bucket, _sum, _count), with its metric's type and
 * labels: MetricsService's own, and the gauges the modules register on it that read the database at each
 * scrape (channels, tasks waiting upstream), made here with repositories that are never read.
 */
function exposedSeries(): { series: Map<string, SeriesInfo>; declared: string[] } {
  const service = new MetricsService();
  const unread = {} as never;
  new ChannelMetrics(service, unread);
  new WaitingMetrics(service, unread);
  const series = new Map<string, SeriesInfo>();
  const declared: string[] = [];
  for (const m of service.registry.getMetricsAsArray() as unknown as Array<{ name: string; type: string; labelNames?: string[] }>) {
    if (m.name.startsWith('mgw_') && !DEFAULT_METRIC.test(m.name)) declared.push(m.name);
    const names = m.type === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => m.name + s) : m.type === 'summary' ? [m.name, `${m.name}_sum`, `${m.name}_count`] : [m.name];
    for (const name of names) series.set(name, { metric: m.name, type: m.type, labels: [...(m.labelNames ?? [])] });
  }
  return { series, declared };
}

const { series: SERIES, declared: SERVICE_METRICS } = exposedSeries();

const PROMQL_WORDS = new Set(['sum', 'min', 'max', 'avg', 'count', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values', 'group', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/** The series names a PromQL expression (or a Grafana label_values() query) reads. */
function seriesNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // label values and regexes
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries ([5m], [$__rate_interval])
    .replace(/\$\{?\w+\}?/g, ' ') // Grafana variables
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // grouping labels
  // identifiers that are not function calls: label_values(x, operation) → x, operation (the label is dropped below)
  const names = [...bare.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)\b(?!\s*\()/g)].map((m) => m[1]).filter((n) => !PROMQL_WORDS.has(n.toLowerCase()));
  return /^\s*label_values\(/.test(expr) ? names.slice(0, 1) : names;
}

/** Each selector's series name with the label names its matchers use. */
function selectors(expr: string): Array<{ name: string; labels: string[] }> {
  return [...expr.matchAll(/([a-zA-Z_:][\w:]*)\{([^}]*)\}/g)].map((m) => ({ name: m[1], labels: [...m[2].matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]) }));
}

/** Problems with an expression: unknown series, labels a metric does not have, rate() over a gauge, a quantile of no histogram. */
function checkExpression(where: string, expr: string): string[] {
  const problems: string[] = [];
  const names = seriesNames(expr);
  if (names.length === 0) problems.push(`${where}: no metric in ${expr}`);
  for (const name of names) if (!SERIES.has(name) && !EXTERNAL_METRICS.has(name)) problems.push(`${where}: ${name} is not exported (in ${expr.trim()})`);
  for (const { name, labels } of selectors(expr)) {
    const info = SERIES.get(name);
    if (!info) continue;
    for (const label of labels) if (!info.labels.includes(label) && !TARGET_LABELS.includes(label)) problems.push(`${where}: ${name} has no label ${label}`);
  }
  for (const m of expr.matchAll(/\b(rate|irate|increase)\(\s*([a-zA-Z_:][\w:]*)/g)) {
    const info = SERIES.get(m[2]);
    if (info && info.type === 'gauge') problems.push(`${where}: ${m[1]}() over the gauge ${m[2]}`);
  }
  for (const m of expr.matchAll(/histogram_quantile\(\s*[\d.]+\s*,([^]*?)\)\s*\)/g)) {
    if (!/_bucket\b/.test(m[1])) problems.push(`${where}: histogram_quantile() without a _bucket series`);
  }
  for (const m of expr.matchAll(/\bjob\s*=\s*"([^"]*)"/g)) if (m[1] !== SCRAPE_JOB && m[1] !== '$job') problems.push(`${where}: job="${m[1]}" is not the scrape job ${SCRAPE_JOB}`);
  return problems;
}

describe('the metric checks themselves', () => {
  it("take the service's metrics from MetricsService and the gauges the modules register on it, and not prom-client's process metrics", () => {
    expect(SERVICE_METRICS).toEqual(expect.arrayContaining(['mgw_tasks_accepted_total', 'mgw_channel_running_tasks', 'mgw_tasks_waiting_upstream', 'mgw_upstream_poll_lag_seconds']));
    expect(SERVICE_METRICS.filter((m) => DEFAULT_METRIC.test(m))).toEqual([]);
    expect(SERIES.has('mgw_process_cpu_seconds_total')).toBe(true);
  });

  it('find each series a PromQL expression reads, and flag what the service does not export', () => {
    expect(seriesNames('histogram_quantile(0.95, sum by (le, operation) (rate(mgw_task_queue_wait_seconds_bucket{job="$job", operation=~"$operation"}[$__rate_interval])))')).toEqual(['mgw_task_queue_wait_seconds_bucket']);
    expect(seriesNames('sum(rate(a_total{x="y"}[5m])) / sum(rate(b_total[5m])) > 0.5 and up == 0 unless absent(c)')).toEqual(['a_total', 'b_total', 'up', 'c']);
    expect(seriesNames('label_values(mgw_tasks_accepted_total{job="$job"}, operation)')).toEqual(['mgw_tasks_accepted_total']);
    expect(checkExpression('t', 'sum(rate(mgw_tasks_accepted_total{operation="video"}[5m]))')).toEqual([]);
    expect(checkExpression('t', 'sum(rate(mgw_tasks_acepted_total[5m]))')).toEqual([expect.stringContaining('mgw_tasks_acepted_total is not exported')]);
    expect(checkExpression('t', 'histogram_quantile(0.9, sum by (le) (rate(mgw_task_queue_wait_seconds[5m])))')).toEqual([expect.stringContaining('mgw_task_queue_wait_seconds is not exported'), expect.stringContaining('without a _bucket')]);
    expect(checkExpression('t', 'mgw_tasks_finished_total{outcome="failed"}')).toEqual([expect.stringContaining('has no label outcome')]);
    expect(checkExpression('t', 'rate(mgw_tasks_running[5m])')).toEqual([expect.stringContaining('over the gauge')]);
    expect(checkExpression('t', 'up{job="kubernetes-pods"}')).toEqual([expect.stringContaining('not the scrape job')]);
  });
});

describe('deploy/prometheus: scraping and alert rules', () => {
  const alertGroups: Obj = yamlDocuments('deploy/prometheus/alerts.yaml')[0];
  const rules: Obj[] = alertGroups.groups.flatMap((g: Obj) => g.rules);
  const podLabels = deployments.map((d) => d.spec.template.metadata.labels);

  it('scrapes /metrics, a route that takes the metrics token, on the http port of both roles as job media-gateway (plain config and PodMonitor), sending the token', () => {
    expect(metricsRoute).toEqual({ routes: ['/metrics'], isPublic: false, takesMetricsToken: true });
    const [job] = yamlDocuments('deploy/prometheus/scrape-config.yaml')[0].scrape_configs;
    expect([job.job_name, job.metrics_path]).toEqual([SCRAPE_JOB, '/metrics']);
    // Prometheus's own setting: the token as a Bearer credential, read from a file (a mounted copy of the Secret's key)
    expect(job.authorization).toEqual({ type: 'Bearer', credentials_file: expect.stringMatching(/\/METRICS_TOKEN$/) });
    expect([job.bearer_token, job.authorization.credentials]).toEqual([undefined, undefined]);
    const keep = (label: string) => job.relabel_configs.find((r: Obj) => r.action === 'keep' && r.source_labels[0] === label).regex;
    for (const labels of podLabels) expect(labels['app.kubernetes.io/name']).toMatch(new RegExp(`^(?:${keep('__meta_kubernetes_pod_label_app_kubernetes_io_name')})$`));
    for (const d of deployments) expect(containerOf(d).ports.map((p: Obj) => p.name)).toContain(keep('__meta_kubernetes_pod_container_port_name'));
    expect(job.relabel_configs.map((r: Obj) => r.target_label).filter(Boolean).sort()).toEqual(['namespace', 'pod', 'role']);

    const [monitor] = yamlDocuments('deploy/prometheus/podmonitor.yaml');
    expect([monitor.apiVersion, monitor.kind, monitor.metadata.namespace]).toEqual(['monitoring.coreos.com/v1', 'PodMonitor', undefined]);
    for (const labels of podLabels) {
      expect(selects(monitor.spec.selector.matchLabels, labels)).toBe(true);
      expect(labels[monitor.spec.jobLabel]).toBe(SCRAPE_JOB);
    }
    for (const endpoint of monitor.spec.podMetricsEndpoints) {
      expect(endpoint.path).toBe('/metrics');
      for (const d of deployments) expect(containerOf(d).ports.map((p: Obj) => p.name)).toContain(endpoint.port);
      // the operator reads the token from the service's Secret (in the PodMonitor's namespace) and sends it as Bearer
      expect(endpoint.authorization).toEqual({ type: 'Bearer', credentials: { name: secret.metadata.name, key: 'METRICS_TOKEN' } });
    }
    // the key the scrapers send is the one each role's pods read: both roles serve /metrics with it
    expect(Object.keys(secret.stringData)).toContain('METRICS_TOKEN');
    for (const d of deployments) {
      const ref = envOf(d).find((e: Obj) => e.name === 'METRICS_TOKEN')?.valueFrom?.secretKeyRef;
      expect([d.metadata.name, ref?.name, ref?.key]).toEqual([d.metadata.name, secret.metadata.name, 'METRICS_TOKEN']);
    }
  });

  it('gives every alert an expression, a for, a severity and a summary and description, each documented in deploy/README.md', () => {
    const guide = read('deploy/README.md');
    expect(rules.length).toBeGreaterThan(0);
    const names = rules.map((r) => r.alert);
    expect(new Set(names).size).toBe(names.length);
    for (const r of rules) {
      expect([r.alert, typeof r.expr, r.for, r.labels?.severity]).toEqual([expect.stringMatching(/^MediaGateway[A-Z]\w+$/), 'string', expect.stringMatching(/^\d+[smh]$/), expect.stringMatching(/^(critical|warning)$/)]);
      expect([r.alert, typeof r.annotations?.summary, typeof r.annotations?.description]).toEqual([r.alert, 'string', 'string']);
      expect([r.alert, guide.includes(`\`${r.alert}\``)]).toEqual([r.alert, true]);
      expect(Object.keys(r).sort()).toEqual(['alert', 'annotations', 'expr', 'for', 'labels']);
    }
  });

  it('alerts on failing callbacks, a growing queue wait, failing tasks, an unavailable database and open circuits', () => {
    const using = (pattern: RegExp) => rules.filter((r) => pattern.test(r.expr)).map((r) => r.alert);
    expect(using(/mgw_callback_deliveries_failed_total/).length).toBeGreaterThan(0);
    expect(using(/histogram_quantile\(0\.95,[^]*mgw_task_queue_wait_seconds_bucket/).length).toBeGreaterThan(0);
    expect(using(/mgw_tasks_finished_total\{[^}]*state="failed"/).length).toBeGreaterThan(0);
    expect(using(/kube_deployment_status_replicas_available/)).toEqual(['MediaGatewayDatabaseUnavailable']);
    expect(using(/mgw_channel_circuit_state/).length).toBeGreaterThan(0);
    // the deployment names the database alert reads are the Deployments'
    const db = rules.find((r) => r.alert === 'MediaGatewayDatabaseUnavailable').expr as string;
    const pattern = new RegExp(`^(?:${/deployment=~"([^"]+)"/.exec(db)![1]})$`);
    for (const d of deployments) expect(d.metadata.name).toMatch(pattern);
  });

  it('reads only metrics that exist, with their labels', () => {
    const problems = rules.flatMap((r) => checkExpression(`alert ${r.alert}`, r.expr));
    expect(problems).toEqual([]);
  });
});

describe('deploy/grafana: the dashboard', () => {
  const dashboard: Obj = JSON.parse(read('deploy/grafana/media-gateway.json'));
  const panels: Obj[] = dashboard.panels.flatMap((p: Obj) => [p, ...(p.panels ?? [])]);
  const queryPanels = panels.filter((p) => p.type !== 'row' && p.type !== 'text');
  const expressions = queryPanels.flatMap((p) => p.targets.map((t: Obj) => ({ where: `panel "${p.title}"`, expr: t.expr as string })));
  const variables: Obj[] = dashboard.templating.list;

  it('is a Grafana dashboard (schemaVersion 36 or later) on a Prometheus data source variable', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect([typeof dashboard.title, typeof dashboard.uid]).toEqual(['string', 'string']);
    expect(variables.find((v) => v.type === 'datasource')).toEqual(expect.objectContaining({ name: 'datasource', query: 'prometheus' }));
    expect(variables.find((v) => v.name === 'job')).toEqual(expect.objectContaining({ query: SCRAPE_JOB }));
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of queryPanels) {
      expect([p.title, p.datasource]).toEqual([p.title, { type: 'prometheus', uid: '${datasource}' }]);
      expect([p.title, p.targets.length > 0]).toEqual([p.title, true]);
      for (const t of p.targets) expect([p.title, t.datasource?.uid, typeof t.expr]).toEqual([p.title, '${datasource}', 'string']);
      expect([p.title, p.gridPos.x + p.gridPos.w <= 24]).toEqual([p.title, true]);
    }
    for (const v of variables.filter((x) => x.type === 'query')) expect([v.name, v.datasource?.uid]).toEqual([v.name, '${datasource}']);
  });

  it('reads only metrics that exist, with their labels (panels and variables)', () => {
    const queries = variables.filter((v) => v.type === 'query').map((v) => ({ where: `variable ${v.name}`, expr: (v.query?.query ?? v.query) as string }));
    const problems = [...expressions, ...queries].flatMap(({ where, expr }) => checkExpression(where, expr));
    expect(problems).toEqual([]);
  });

  it("shows every metric the service declares, and the channels' metrics", () => {
    const shown = new Set(expressions.flatMap(({ expr }) => seriesNames(expr)).map((n) => SERIES.get(n)?.metric ?? n));
    expect(SERVICE_METRICS.length).toBeGreaterThan(0);
    for (const metric of SERVICE_METRICS) expect([metric, shown.has(metric)]).toEqual([metric, true]);
  });
});
